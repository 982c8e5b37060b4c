//! The PMI-2 wire format: each message is a 6-character decimal length
//! followed by `cmd=NAME;key=value;…` with `;` inside values doubled.

use std::io::{self, Read};

/// A decoded message: `cmd` first, then the other keys in order.
pub type Message = Vec<(String, String)>;

pub(crate) fn get<'a>(m: &'a Message, key: &str) -> Option<&'a str> {
    m.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// Encodes one message with its length header.
pub fn encode(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut body = String::new();
    for (k, v) in fields {
        body.push_str(k);
        body.push('=');
        body.push_str(&v.replace(';', ";;"));
        body.push(';');
    }
    let mut out = format!("{:6}", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

pub(crate) fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Decodes a message body (without the length header).
pub fn decode(body: &str) -> io::Result<Message> {
    let mut out = Vec::new();
    let mut chars = body.chars().peekable();
    while chars.peek().is_some() {
        let key: String = chars.by_ref().take_while(|&c| c != '=').collect();
        let mut value = String::new();
        loop {
            match chars.next() {
                Some(';') if chars.peek() == Some(&';') => {
                    chars.next();
                    value.push(';');
                }
                Some(';') | None => break,
                Some(c) => value.push(c),
            }
        }
        if key.is_empty() {
            return Err(invalid(format!(
                "PMI-2 message with an empty key: {body:?}"
            )));
        }
        out.push((key, value));
    }
    if out.first().is_none_or(|(k, _)| k != "cmd") {
        return Err(invalid(format!(
            "PMI-2 message without cmd first: {body:?}"
        )));
    }
    Ok(out)
}

/// Reads one message; `Ok(None)` at a clean end of stream.
pub fn read_message(r: &mut impl Read) -> io::Result<Option<Message>> {
    let mut header = [0u8; 6];
    let mut got = 0;
    while got < 6 {
        let n = r.read(&mut header[got..])?;
        if n == 0 {
            return if got == 0 {
                Ok(None)
            } else {
                Err(invalid("PMI-2 stream ended inside a length header"))
            };
        }
        got += n;
    }
    if &header == b"cmd=in" {
        // PMI-1's init line, which a PMI-2 client sends first (Slurm's server
        // expects it): `cmd=init pmi_version=2 pmi_subversion=0`.
        let line = format!("cmd=in{}", read_line(r)?);
        return decode_line(&line).map(Some);
    }
    let len: usize = std::str::from_utf8(&header)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| {
            invalid(format!(
                "bad PMI-2 length header {:?}",
                String::from_utf8_lossy(&header)
            ))
        })?;
    let mut body = vec![0u8; len];
    r.read_exact(&mut body)?;
    let body = String::from_utf8(body).map_err(|_| invalid("PMI-2 message is not UTF-8"))?;
    decode(&body).map(Some)
}

/// The PMI-1 init line a PMI-2 client opens with.
pub const INIT_LINE: &[u8] = b"cmd=init pmi_version=2 pmi_subversion=0\n";
/// The server's answer to it.
pub const INIT_REPLY: &[u8] = b"cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n";

/// The rest of a PMI-1 line, up to its newline (excluded), read byte by byte:
/// nothing after it is taken from the stream.
pub fn read_line(r: &mut impl Read) -> io::Result<String> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        if r.read(&mut byte)? == 0 {
            return Err(invalid("PMI stream ended inside a PMI-1 line"));
        }
        if byte[0] == b'\n' {
            break;
        }
        line.push(byte[0]);
        if line.len() > 1024 {
            return Err(invalid("a PMI-1 line longer than 1024 bytes"));
        }
    }
    String::from_utf8(line).map_err(|_| invalid("PMI-1 line is not UTF-8"))
}

/// A PMI-1 line: `key=value` words separated by spaces, `cmd` first.
pub fn decode_line(line: &str) -> io::Result<Message> {
    let out: Message = line
        .split_whitespace()
        .map(|w| {
            w.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| invalid(format!("PMI-1 word without '=': {w:?}")))
        })
        .collect::<io::Result<_>>()?;
    if out.first().is_none_or(|(k, _)| k != "cmd") {
        return Err(invalid(format!("PMI-1 line without cmd first: {line:?}")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_format_round_trips_with_escaped_semicolons() {
        let bytes = encode(&[("cmd", "kvs-put"), ("key", "a"), ("value", "x;y")]);
        assert_eq!(&bytes[..6], b"    29");
        let body = std::str::from_utf8(&bytes[6..]).unwrap();
        assert_eq!(body, "cmd=kvs-put;key=a;value=x;;y;");
        let m = decode(body).unwrap();
        assert_eq!(m[2], ("value".to_string(), "x;y".to_string()));
        assert!(decode("key=a;").is_err());
    }

    #[test]
    fn a_pmi1_init_line_before_pmi2_messages_is_read_as_init() {
        let mut bytes = INIT_LINE.to_vec();
        bytes.extend(encode(&[("cmd", "fullinit"), ("pmirank", "3")]));
        let mut r = &bytes[..];
        let init = read_message(&mut r).unwrap().unwrap();
        assert_eq!(init[0], ("cmd".to_string(), "init".to_string()));
        assert_eq!(get(&init, "pmi_version"), Some("2"));
        let next = read_message(&mut r).unwrap().unwrap();
        assert_eq!(get(&next, "pmirank"), Some("3"));
        let mut reply = &INIT_REPLY[..];
        let line = read_line(&mut reply).unwrap();
        assert_eq!(get(&decode_line(&line).unwrap(), "rc"), Some("0"));
    }
}
