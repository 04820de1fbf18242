//! Who may run what, as Redis has it: a password for the default user (`requirepass`), commands switched off
//! for every client (FLUSHALL, SHUTDOWN, ...), and protected mode (no password: only loopback clients).

use std::net::SocketAddr;
use thiserror::Error;

/// Why an access setting was refused at start.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum AccessError {
    /// An empty password would let anyone in while looking protected.
    #[error("the password is empty")]
    EmptyPassword,
    /// A password file that cannot be read, or whose first line is empty.
    #[error("the password file {path}: {why}")]
    PasswordFile {
        /// The file.
        path: String,
        /// What is wrong with it.
        why: String,
    },
    /// A name given to disable is not a command this server knows.
    #[error("cannot disable '{0}': not a command of this server")]
    UnknownCommand(String),
}

/// The password a file holds: its first line (a trailing `\r` dropped), never empty.
pub fn password_file(path: &str) -> Result<String, AccessError> {
    let bad = |why: String| AccessError::PasswordFile {
        path: path.to_string(),
        why,
    };
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let line = text.lines().next().unwrap_or("").trim_end_matches('\r');
    if line.is_empty() {
        return Err(bad("empty (its first line is the password)".into()));
    }
    Ok(line.to_string())
}

/// Commands an operator may switch off that this server does not otherwise implement (refused either way).
const DISABLE_ONLY: &[&str] = &["DEBUG"];

/// The access rules of one server.
#[derive(Clone, Debug, Default)]
pub struct Access {
    password: Option<Vec<u8>>,
    disabled: Vec<String>,
    protected: bool,
}

impl Access {
    /// Rules with an optional password, the commands to refuse (any case) and protected mode. `known` says
    /// whether a name is a command of the server.
    pub fn new(
        password: Option<&str>,
        disabled: &[String],
        protected: bool,
        known: impl Fn(&str) -> bool,
    ) -> Result<Access, AccessError> {
        if password.is_some_and(str::is_empty) {
            return Err(AccessError::EmptyPassword);
        }
        let mut names = Vec::new();
        for d in disabled {
            let name = d.trim().to_ascii_uppercase();
            if !known(&name) && !DISABLE_ONLY.contains(&name.as_str()) {
                return Err(AccessError::UnknownCommand(d.clone()));
            }
            if !names.contains(&name) {
                names.push(name);
            }
        }
        Ok(Access {
            password: password.map(|p| p.as_bytes().to_vec()),
            disabled: names,
            protected,
        })
    }

    /// Whether a client must authenticate before anything but AUTH, HELLO and QUIT.
    pub fn requires_password(&self) -> bool {
        self.password.is_some()
    }

    /// Whether `user` (None: the default user) with `password` is let in. Without a configured password the
    /// default user takes any password, as a Redis without `requirepass` does. The comparison takes the same
    /// time wherever the first difference is.
    pub fn admits(&self, user: Option<&[u8]>, password: &[u8]) -> bool {
        if user.is_some_and(|u| !u.eq_ignore_ascii_case(b"default")) {
            return false;
        }
        match &self.password {
            None => true,
            Some(p) => same_bytes(p, password),
        }
    }

    /// Whether the command (upper case) is switched off on this server.
    pub fn is_disabled(&self, command: &str) -> bool {
        self.disabled.iter().any(|d| d == command)
    }

    /// The commands switched off, upper case.
    pub fn disabled(&self) -> &[String] {
        &self.disabled
    }

    /// Whether protected mode turns away a client from `peer`: no password is set and it is not on loopback.
    pub fn turns_away(&self, peer: &SocketAddr) -> bool {
        // a dual-stack socket sees a local IPv4 client as ::ffff:127.0.0.1
        self.protected && self.password.is_none() && !peer.ip().to_canonical().is_loopback()
    }
}

/// Equal bytes, compared without stopping at the first difference (the length still shows).
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The reply to a client that has not authenticated.
pub const NOAUTH: &str = "NOAUTH Authentication required.";

/// The reply to wrong credentials.
pub const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// The reply, and the connection's close, for a client protected mode turns away.
pub const DENIED: &str = "DENIED Cosine is in protected mode: no password is set and this client is not on \
loopback. Set one (cosine serve --requirepass-file FILE), bind 127.0.0.1, or start with --protected-mode no";

#[cfg(test)]
mod tests {
    use super::*;

    fn known(c: &str) -> bool {
        ["FLUSHALL", "SHUTDOWN", "GET"].contains(&c)
    }

    #[test]
    fn passwords_and_users() {
        let a = Access::new(Some("s3cret"), &[], true, known).unwrap();
        assert!(a.requires_password());
        assert!(a.admits(None, b"s3cret"));
        assert!(a.admits(Some(b"default"), b"s3cret"));
        assert!(!a.admits(Some(b"admin"), b"s3cret"));
        assert!(!a.admits(None, b"s3cre"));
        assert!(!a.admits(None, b"s3cret "));
        assert!(!a.admits(None, b""));
        let open = Access::new(None, &[], true, known).unwrap();
        assert!(!open.requires_password());
        assert!(open.admits(None, b"anything"));
        assert!(!open.admits(Some(b"other"), b"anything"));
        assert_eq!(
            Access::new(Some(""), &[], true, known).unwrap_err(),
            AccessError::EmptyPassword
        );
    }

    #[test]
    fn disabled_commands_are_known_ones() {
        let a = Access::new(None, &["flushall".into(), "DEBUG".into()], true, known).unwrap();
        assert!(a.is_disabled("FLUSHALL"));
        assert!(a.is_disabled("DEBUG"));
        assert!(!a.is_disabled("GET"));
        assert_eq!(
            Access::new(None, &["FLUSHEVERYTHING".into()], true, known).unwrap_err(),
            AccessError::UnknownCommand("FLUSHEVERYTHING".into())
        );
    }

    #[test]
    fn protected_mode_turns_away_remote_clients_without_a_password() {
        let local: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let local6: SocketAddr = "[::1]:5000".parse().unwrap();
        let remote: SocketAddr = "10.1.2.3:5000".parse().unwrap();
        let open = Access::new(None, &[], true, known).unwrap();
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:5000".parse().unwrap();
        assert!(!open.turns_away(&local) && !open.turns_away(&local6) && !open.turns_away(&mapped));
        assert!(open.turns_away(&remote));
        let off = Access::new(None, &[], false, known).unwrap();
        assert!(!off.turns_away(&remote));
        let with_password = Access::new(Some("p"), &[], true, known).unwrap();
        assert!(!with_password.turns_away(&remote));
    }
}
