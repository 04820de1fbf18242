//! A connection's requests as its bytes arrive: each byte is looked at once and each argument copied once,
//! however the stream is cut into reads, so a large or slow request costs time linear in its bytes. Limits
//! are Redis's: the request's total size, the arguments of one request, an inline request's length, and for a
//! connection that has not authenticated, a multibulk of at most 10 arguments and bulks of at most 16 KiB.

use thiserror::Error;

/// A malformed request: the connection that sent it is closed after an error reply.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("Protocol error: {0}")]
pub struct ProtocolError(pub String);

/// A parsed request: its arguments and the bytes it took.
pub type Parsed = (Vec<Vec<u8>>, usize);

/// Parses one request from the front of `buf`: `Ok(Some((args, consumed)))`, `Ok(None)` when more bytes are
/// needed, or an error. Requests larger than `max_bytes` are errors. (A connection reads with a
/// [`RequestReader`], which keeps its place between reads.)
pub fn parse(buf: &[u8], max_bytes: usize) -> Result<Option<Parsed>, ProtocolError> {
    let mut r = RequestReader::new(max_bytes);
    r.extend(buf);
    Ok(r.next(true)?.map(|args| (args, r.consumed())))
}

/// Most arguments one request may declare (Redis's `*` limit).
pub const MAX_ARGS: usize = 1024 * 1024;

/// Longest inline request (`PING\r\n`), as Redis's `PROTO_INLINE_MAX_SIZE`.
pub const MAX_INLINE: usize = 64 * 1024;

/// Most arguments, and longest bulk, a connection may send before it authenticates.
pub const UNAUTHENTICATED_ARGS: usize = 10;
/// See [`UNAUTHENTICATED_ARGS`].
pub const UNAUTHENTICATED_BULK: usize = 16 * 1024;

/// What one argument costs beyond its bytes (its `Vec` header), counted against the request's size limit.
const ARG_OVERHEAD: usize = std::mem::size_of::<Vec<u8>>();

/// A buffer grown past this by a large request is given back once it is read.
const KEPT_CAPACITY: usize = 1 << 20;

/// Longest `*n` or `$n` line.
const MAX_LENGTH_LINE: usize = 32;

/// A request being read: its arguments so far, how many it declared, their bytes so far, and the length of the
/// bulk being read (after its `$n` line).
#[derive(Debug)]
struct Partial {
    args: Vec<Vec<u8>>,
    count: usize,
    total: usize,
    bulk: Option<usize>,
}

/// Reads one connection's requests from its bytes.
#[derive(Debug)]
pub struct RequestReader {
    buf: Vec<u8>,
    /// Where the unread bytes start.
    pos: usize,
    /// Where the search for the current line's end goes on (bytes before it hold no line end).
    scan: usize,
    partial: Option<Partial>,
    max_bytes: usize,
}

impl RequestReader {
    /// A reader that refuses requests whose arguments total more than `max_bytes`.
    pub fn new(max_bytes: usize) -> Self {
        RequestReader {
            buf: Vec::with_capacity(16 * 1024),
            pos: 0,
            scan: 0,
            partial: None,
            max_bytes,
        }
    }

    /// Appends bytes received. Bytes already read are dropped first, so the buffer holds at most the request
    /// being read and what came after it.
    pub fn extend(&mut self, bytes: &[u8]) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.scan -= self.pos;
            self.pos = 0;
        }
        if self.buf.is_empty() && self.buf.capacity() > KEPT_CAPACITY {
            self.buf = Vec::with_capacity(16 * 1024);
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes held: the request being read and the requests after it not yet read.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Bytes read so far in this buffer's current window (what [`parse`] reports as used).
    pub fn consumed(&self) -> usize {
        self.pos
    }

    /// The next whole request (Ok(None): more bytes are needed), or the protocol error that ends the
    /// connection. `authenticated` lifts the limits on a connection that has not authenticated.
    pub fn next(&mut self, authenticated: bool) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        loop {
            let Some(p) = self.partial.as_mut() else {
                let Some(&first) = self.buf.get(self.pos) else {
                    return Ok(None);
                };
                if first != b'*' {
                    return self.inline(authenticated);
                }
                let Some(line) = self.line(MAX_LENGTH_LINE, "unterminated multibulk length")?
                else {
                    return Ok(None);
                };
                let count = number(&line[1..])?;
                let limit = if authenticated {
                    MAX_ARGS
                } else {
                    UNAUTHENTICATED_ARGS
                };
                if count > limit as i64 {
                    return Err(ProtocolError(if authenticated {
                        "invalid multibulk length".into()
                    } else {
                        "unauthenticated multibulk length".into()
                    }));
                }
                if count <= 0 {
                    return Ok(Some(Vec::new()));
                }
                let count = count as usize;
                // never more room up front than a few arguments' worth: a `*1048576` header alone must not
                // allocate for a million arguments
                self.partial = Some(Partial {
                    args: Vec::with_capacity(count.min(64)),
                    count,
                    total: 0,
                    bulk: None,
                });
                continue;
            };
            match p.bulk {
                None => {
                    let Some(&first) = self.buf.get(self.pos) else {
                        return Ok(None);
                    };
                    if first != b'$' {
                        return Err(ProtocolError(format!(
                            "expected '$', got '{}'",
                            first as char
                        )));
                    }
                    let Some(line) = self.line(MAX_LENGTH_LINE, "unterminated bulk length")? else {
                        return Ok(None);
                    };
                    let len = number(&line[1..])?;
                    if len < 0 {
                        return Err(ProtocolError("invalid bulk length".into()));
                    }
                    let len = len as usize;
                    if !authenticated && len > UNAUTHENTICATED_BULK {
                        return Err(ProtocolError("unauthenticated bulk length".into()));
                    }
                    let p = self.partial.as_mut().expect("a request is being read");
                    // an argument costs its bytes and its vector's header: a million empty arguments are not free
                    p.total = p.total.saturating_add(len + ARG_OVERHEAD);
                    if p.total > self.max_bytes {
                        return Err(ProtocolError(format!(
                            "request larger than {} bytes",
                            self.max_bytes
                        )));
                    }
                    p.bulk = Some(len);
                }
                Some(len) => {
                    if self.buf.len() - self.pos < len + 2 {
                        return Ok(None);
                    }
                    let start = self.pos;
                    if &self.buf[start + len..start + len + 2] != b"\r\n" {
                        return Err(ProtocolError("bulk string not terminated by CRLF".into()));
                    }
                    p.args.push(self.buf[start..start + len].to_vec());
                    p.bulk = None;
                    self.pos = start + len + 2;
                    self.scan = self.pos;
                    if p.args.len() == p.count {
                        let done = self.partial.take().expect("a request is being read");
                        return Ok(Some(done.args));
                    }
                }
            }
        }
    }

    /// An inline request: words separated by spaces up to `\n` (or `\r\n`), at most [`MAX_INLINE`] bytes, and
    /// before authentication at most [`UNAUTHENTICATED_ARGS`] words.
    fn inline(&mut self, authenticated: bool) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        let from = self.scan.max(self.pos);
        let found = self.buf[from..].iter().position(|b| *b == b'\n');
        let end = found.map_or(self.buf.len(), |i| from + i);
        if end - self.pos > MAX_INLINE {
            return Err(ProtocolError("too big inline request".into()));
        }
        if found.is_none() {
            self.scan = self.buf.len();
            return Ok(None);
        }
        let text = &self.buf[self.pos..end];
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let words = text.split(|b| *b == b' ').filter(|w| !w.is_empty());
        if !authenticated && words.clone().count() > UNAUTHENTICATED_ARGS {
            return Err(ProtocolError("unauthenticated inline request".into()));
        }
        let args = words.map(|w| w.to_vec()).collect();
        self.pos = end + 1;
        self.scan = self.pos;
        Ok(Some(args))
    }

    /// The line at the read position, without its `\r\n` (None: not all here yet), moving past it; a line
    /// longer than `max` is the error `why`.
    fn line(&mut self, max: usize, why: &str) -> Result<Option<Vec<u8>>, ProtocolError> {
        // a `\r` found last time may be the first half of the `\r\n`
        let from = self.scan.max(self.pos + 1).saturating_sub(1).max(self.pos);
        match self.buf[from..].windows(2).position(|w| w == b"\r\n") {
            Some(i) => {
                let end = from + i;
                let line = self.buf[self.pos..end].to_vec();
                self.pos = end + 2;
                self.scan = self.pos;
                Ok(Some(line))
            }
            None if self.buf.len() - self.pos > max => Err(ProtocolError(why.into())),
            None => {
                self.scan = self.buf.len();
                Ok(None)
            }
        }
    }
}

fn number(bytes: &[u8]) -> Result<i64, ProtocolError> {
    std::str::from_utf8(bytes)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| {
            ProtocolError(format!(
                "invalid length '{}'",
                String::from_utf8_lossy(bytes)
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn encode(args: &[Vec<u8>]) -> Vec<u8> {
        crate::resp::encode_request(&args.iter().map(Vec::as_slice).collect::<Vec<_>>())
    }

    /// Every request read from `stream` cut into reads at `cuts`.
    fn read_all(
        stream: &[u8],
        cuts: &[usize],
        authed: bool,
    ) -> Result<Vec<Vec<Vec<u8>>>, ProtocolError> {
        let mut r = RequestReader::new(1 << 20);
        let mut got = Vec::new();
        let mut at = 0;
        let mut bounds: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
        bounds.push(stream.len());
        bounds.sort_unstable();
        for b in bounds {
            r.extend(&stream[at..b.max(at)]);
            at = b.max(at);
            while let Some(args) = r.next(authed)? {
                got.push(args);
            }
        }
        Ok(got)
    }

    proptest! {
        #[test]
        fn any_cut_of_a_pipeline_reads_the_same_requests(
            requests in prop::collection::vec(
                prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 1..6), 1..8),
            cuts in prop::collection::vec(any::<usize>(), 0..20),
        ) {
            let mut stream = Vec::new();
            for r in &requests {
                stream.extend(encode(r));
            }
            stream.extend_from_slice(b"PING inline\r\n");
            let mut want = requests.clone();
            want.push(vec![b"PING".to_vec(), b"inline".to_vec()]);
            prop_assert_eq!(read_all(&stream, &cuts, true).unwrap(), want);
        }
    }

    #[test]
    fn multibulk_and_inline() {
        let req = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n*1\r\n$4\r\nPING\r\n";
        let (args, used) = parse(req, 1 << 20).unwrap().unwrap();
        assert_eq!(
            args,
            vec![b"SET".to_vec(), b"k".to_vec(), b"value".to_vec()]
        );
        let (args, _) = parse(&req[used..], 1 << 20).unwrap().unwrap();
        assert_eq!(args, vec![b"PING".to_vec()]);
        assert_eq!(
            parse(b"PING hello\r\n", 100).unwrap().unwrap().0,
            vec![b"PING".to_vec(), b"hello".to_vec()]
        );
        // incomplete
        for cut in 1..req.len() - 16 {
            assert_eq!(parse(&req[..cut], 1 << 20).unwrap(), None, "cut {cut}");
        }
    }

    #[test]
    fn one_byte_at_a_time() {
        let stream = encode(&[b"SET".to_vec(), b"k\r\n".to_vec(), vec![b'x'; 300]]);
        let cuts: Vec<usize> = (0..stream.len()).collect();
        assert_eq!(read_all(&stream, &cuts, true).unwrap().len(), 1);
    }

    #[test]
    fn limits() {
        // a huge declared count allocates nothing up front and is refused above the limit
        assert!(read_all(b"*1048577\r\n", &[], true).is_err());
        let mut r = RequestReader::new(1 << 20);
        r.extend(b"*1048576\r\n");
        assert_eq!(r.next(true).unwrap(), None);
        assert!(r.partial.as_ref().unwrap().args.capacity() <= 64);
        // before authentication: at most 10 arguments and 16 KiB a bulk
        assert!(read_all(b"*11\r\n", &[], false).is_err());
        assert!(read_all(b"*1\r\n$16385\r\n", &[], false).is_err());
        assert!(read_all(b"*1\r\n$16385\r\n", &[], true).is_ok());
        // a request over the size limit is refused at its length line, before its bytes come
        let mut r = RequestReader::new(100);
        r.extend(b"*2\r\n$60\r\n");
        assert_eq!(r.next(true).unwrap(), None);
        r.extend(&[b'x'; 60]);
        r.extend(b"\r\n$50\r\n");
        assert!(r.next(true).unwrap_err().0.contains("larger than 100"));
        // an endless length line, an endless inline request
        assert!(read_all(&[b'*'; 40], &[], true).is_err());
        assert!(read_all(&vec![b'a'; MAX_INLINE + 2], &[], true).is_err());
        assert!(read_all(&vec![b'a'; 1000], &[], true).unwrap().is_empty());
        // a line whose end comes in a later read is measured whole
        let mut long = vec![b'a'; MAX_INLINE + 10];
        long.extend_from_slice(b"\r\n");
        assert!(read_all(&long, &[MAX_INLINE - 5], true).is_err());
        // inline words before authentication
        assert!(read_all(b"a b c d e f g h i j k\r\n", &[], false).is_err());
        assert_eq!(
            read_all(b"a b c d e f g h i j k\r\n", &[], true).unwrap()[0].len(),
            11
        );
        // a million empty arguments count against the size limit
        let mut r = RequestReader::new(1000);
        r.extend(b"*1000\r\n");
        let mut err = None;
        for _ in 0..1000 {
            r.extend(b"$0\r\n\r\n");
            if let Err(e) = r.next(true) {
                err = Some(e);
                break;
            }
        }
        assert!(err.is_some());
    }

    #[test]
    fn malformed() {
        for bad in [
            &b"*1\r\n+PING\r\n"[..],
            b"*x\r\n",
            b"*1\r\n$-5\r\n",
            b"*1\r\n$2\r\nabcd\r\n",
        ] {
            assert!(
                read_all(bad, &[], true).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn a_slow_large_request_is_scanned_once() {
        // 2 MiB arriving 1 KiB at a time: the buffer is drained of what was read, never re-read from the start
        let value = vec![b'v'; 1 << 20];
        let stream = encode(&[b"SET".to_vec(), b"k".to_vec(), value]);
        let mut r = RequestReader::new(4 << 20);
        let mut got = None;
        for chunk in stream.chunks(1024) {
            r.extend(chunk);
            assert!(r.buffered() <= stream.len());
            if let Some(a) = r.next(true).unwrap() {
                got = Some(a);
            }
        }
        assert_eq!(got.unwrap()[2].len(), 1 << 20);
        assert_eq!(r.buffered(), 0);
        // the room it took is given back with the next read
        r.extend(b"PING\r\n");
        assert!(r.buf.capacity() <= KEPT_CAPACITY);
    }
}
