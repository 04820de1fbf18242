//! RESP replies, encoded in RESP2, or in RESP3 for a connection that asked for it with `HELLO 3` (requests are
//! read by [`crate::reader`]).

/// A client's request of `args` in RESP: an array of bulk strings, as clients send commands.
pub fn encode_request(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
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
