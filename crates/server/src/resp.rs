//! RESP: parsing requests (arrays of bulk strings, and inline commands) and encoding replies in RESP2, or in
//! RESP3 for a connection that asked for it with `HELLO 3`.

use thiserror::Error;

/// A parsed request: its arguments and the bytes it took.
pub type Parsed = (Vec<Vec<u8>>, usize);

/// A malformed request: the connection that sent it is closed after an error reply.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("Protocol error: {0}")]
pub struct ProtocolError(pub String);

fn line(buf: &[u8], from: usize) -> Option<(&[u8], usize)> {
    let rest = buf.get(from..)?;
    let i = rest.windows(2).position(|w| w == b"\r\n")?;
    Some((&rest[..i], from + i + 2))
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

/// Parses one request from the front of `buf`: `Ok(Some((args, consumed)))`, `Ok(None)` when more bytes are
/// needed, or an error. Requests larger than `max_bytes` are errors.
pub fn parse(buf: &[u8], max_bytes: usize) -> Result<Option<Parsed>, ProtocolError> {
    if buf.is_empty() {
        return Ok(None);
    }
    if buf[0] != b'*' {
        // inline command: words separated by spaces, ended by \r\n (or \n)
        let Some(end) = buf.iter().position(|b| *b == b'\n') else {
            if buf.len() > 64 * 1024 {
                return Err(ProtocolError("too big inline request".into()));
            }
            return Ok(None);
        };
        let text = &buf[..end];
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let args = text
            .split(|b| *b == b' ')
            .filter(|w| !w.is_empty())
            .map(|w| w.to_vec())
            .collect();
        return Ok(Some((args, end + 1)));
    }
    let Some((count, mut pos)) = line(buf, 1) else {
        return if buf.len() > 1024 {
            Err(ProtocolError("unterminated multibulk length".into()))
        } else {
            Ok(None)
        };
    };
    let count = number(count)?;
    if count > 1024 * 1024 {
        return Err(ProtocolError("invalid multibulk length".into()));
    }
    let mut args = Vec::with_capacity(count.max(0) as usize);
    let mut total = 0usize;
    for _ in 0..count.max(0) {
        match buf.get(pos) {
            None => return Ok(None),
            Some(b'$') => {}
            Some(c) => return Err(ProtocolError(format!("expected '$', got '{}'", *c as char))),
        }
        let Some((len, start)) = line(buf, pos + 1) else {
            return if buf.len() - pos > 1024 {
                Err(ProtocolError("unterminated bulk length".into()))
            } else {
                Ok(None)
            };
        };
        let len = number(len)?;
        if len < 0 {
            return Err(ProtocolError("invalid bulk length".into()));
        }
        let len = len as usize;
        total += len;
        if total > max_bytes {
            return Err(ProtocolError(format!(
                "request larger than {max_bytes} bytes"
            )));
        }
        if buf.len() < start + len + 2 {
            return Ok(None);
        }
        if &buf[start + len..start + len + 2] != b"\r\n" {
            return Err(ProtocolError("bulk string not terminated by CRLF".into()));
        }
        args.push(buf[start..start + len].to_vec());
        pos = start + len + 2;
    }
    Ok(Some((args, pos)))
}

/// A double as Redis writes it (C's `%.17g` rounded to the shortest text that reads back the same): plain
/// digits for exponents from −5 to 16, else `d.ddde±XX`; `inf`, `-inf`, `nan`.
pub fn double_text(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let exp = x.abs().log10().floor();
    if (-5.0..17.0).contains(&exp) {
        return format!("{x}");
    }
    let s = format!("{x:e}");
    let (mantissa, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    format!(
        "{mantissa}e{}{:02}",
        if e < 0 { '-' } else { '+' },
        e.unsigned_abs()
    )
}

/// The protocol a connection speaks: RESP2 until it sends `HELLO 3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Protocol {
    /// RESP2 (every client's default).
    #[default]
    Resp2,
    /// RESP3: maps, doubles, nulls.
    Resp3,
}

/// A reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `+OK`.
    Simple(String),
    /// `-ERR ...`.
    Error(String),
    /// `:n`.
    Integer(i64),
    /// `$n` bulk string, or the null bulk string (RESP3: null).
    Bulk(Option<Vec<u8>>),
    /// `*n` array, or the null array (RESP3: null).
    Array(Option<Vec<Reply>>),
    /// A map (RESP3 `%n`; in RESP2 a flat array of key, value, ...).
    Map(Vec<(Reply, Reply)>),
    /// Pairs such as a sorted set's members with scores (RESP3 an array of two-element arrays, as Redis 7
    /// replies; in RESP2 a flat array).
    Pairs(Vec<(Reply, Reply)>),
    /// A floating-point number (RESP3 `,x`; in RESP2 a bulk string).
    Double(f64),
}

impl Reply {
    /// `+OK`.
    pub fn ok() -> Reply {
        Reply::Simple("OK".into())
    }

    /// An error reply; `msg` starts with its code (ERR, WRONGTYPE, ...).
    pub fn err(msg: impl Into<String>) -> Reply {
        Reply::Error(msg.into())
    }

    /// A bulk string.
    pub fn bulk(b: impl Into<Vec<u8>>) -> Reply {
        Reply::Bulk(Some(b.into()))
    }

    /// Appends the RESP2 encoding to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.encode_as(Protocol::Resp2, out)
    }

    /// Appends the encoding in `proto` to `out`.
    pub fn encode_as(&self, proto: Protocol, out: &mut Vec<u8>) {
        let resp3 = proto == Protocol::Resp3;
        match self {
            Reply::Simple(s) => {
                out.push(b'+');
                out.extend_from_slice(s.replace(['\r', '\n'], " ").as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Reply::Error(s) => {
                out.push(b'-');
                out.extend_from_slice(s.replace(['\r', '\n'], " ").as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Reply::Integer(n) => out.extend_from_slice(format!(":{n}\r\n").as_bytes()),
            Reply::Bulk(None) | Reply::Array(None) if resp3 => out.extend_from_slice(b"_\r\n"),
            Reply::Bulk(None) => out.extend_from_slice(b"$-1\r\n"),
            Reply::Bulk(Some(b)) => {
                out.extend_from_slice(format!("${}\r\n", b.len()).as_bytes());
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
            Reply::Array(None) => out.extend_from_slice(b"*-1\r\n"),
            Reply::Array(Some(items)) => {
                out.extend_from_slice(format!("*{}\r\n", items.len()).as_bytes());
                for i in items {
                    i.encode_as(proto, out);
                }
            }
            Reply::Map(pairs) if resp3 => {
                out.extend_from_slice(format!("%{}\r\n", pairs.len()).as_bytes());
                for (k, v) in pairs {
                    k.encode_as(proto, out);
                    v.encode_as(proto, out);
                }
            }
            Reply::Pairs(pairs) if resp3 => {
                out.extend_from_slice(format!("*{}\r\n", pairs.len()).as_bytes());
                for (k, v) in pairs {
                    out.extend_from_slice(b"*2\r\n");
                    k.encode_as(proto, out);
                    v.encode_as(proto, out);
                }
            }
            Reply::Map(pairs) | Reply::Pairs(pairs) => {
                out.extend_from_slice(format!("*{}\r\n", 2 * pairs.len()).as_bytes());
                for (k, v) in pairs {
                    k.encode_as(proto, out);
                    v.encode_as(proto, out);
                }
            }
            Reply::Double(x) if resp3 => {
                out.extend_from_slice(format!(",{}\r\n", double_text(*x)).as_bytes());
            }
            Reply::Double(x) => Reply::bulk(double_text(*x)).encode_as(proto, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn malformed_and_oversized() {
        assert!(parse(b"*1\r\n+PING\r\n", 100).is_err());
        assert!(parse(b"*x\r\n", 100).is_err());
        assert!(parse(b"*1\r\n$-5\r\n", 100).is_err());
        assert!(parse(b"*1\r\n$200\r\n", 100).is_err());
        assert!(parse(b"*1\r\n$2\r\nabcd\r\n", 100).is_err());
    }

    #[test]
    fn encodes() {
        let mut out = Vec::new();
        Reply::Array(Some(vec![
            Reply::ok(),
            Reply::Integer(3),
            Reply::Bulk(None),
            Reply::bulk("x"),
            Reply::err("ERR no"),
        ]))
        .encode(&mut out);
        assert_eq!(out, b"*5\r\n+OK\r\n:3\r\n$-1\r\n$1\r\nx\r\n-ERR no\r\n");
    }

    #[test]
    fn doubles_read_as_redis_writes_them() {
        for (x, text) in [
            (1.5, "1.5"),
            (2.0, "2"),
            (-0.25, "-0.25"),
            (1e20, "1e+20"),
            (1e-7, "1e-07"),
            (1.5e-300, "1.5e-300"),
            (123456789.0, "123456789"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (-0.0, "0"),
        ] {
            assert_eq!(double_text(x), text);
            assert_eq!(text.parse::<f64>().ok(), Some(x), "{text} reads back");
        }
    }

    #[test]
    fn encodes_resp3_and_falls_back_to_resp2() {
        let reply = Reply::Array(Some(vec![
            Reply::Map(vec![(Reply::bulk("f"), Reply::bulk("v"))]),
            Reply::Pairs(vec![(Reply::bulk("m"), Reply::Double(1.5))]),
            Reply::Bulk(None),
            Reply::Array(None),
            Reply::Double(f64::NEG_INFINITY),
        ]));
        let mut out = Vec::new();
        reply.encode_as(Protocol::Resp3, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "*5\r\n%1\r\n$1\r\nf\r\n$1\r\nv\r\n*1\r\n*2\r\n$1\r\nm\r\n,1.5\r\n_\r\n_\r\n,-inf\r\n"
        );
        let mut out = Vec::new();
        reply.encode(&mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "*5\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$1\r\nm\r\n$3\r\n1.5\r\n$-1\r\n*-1\r\n$4\r\n-inf\r\n"
        );
    }
}
