//! The job's secret: made once per launch, shared by the job's processes.

use std::fmt;

/// 32 random bytes that only the job's processes (and its launcher) know.
#[derive(Clone, PartialEq, Eq)]
pub struct JobSecret([u8; JobSecret::BYTES]);

impl JobSecret {
    pub const BYTES: usize = 32;

    /// A new secret from the kernel's random source.
    pub fn generate() -> std::io::Result<JobSecret> {
        let mut bytes = [0u8; Self::BYTES];
        getrandom::fill(&mut bytes).map_err(|e| {
            std::io::Error::other(format!("no random bytes for the job's secret: {e}"))
        })?;
        Ok(JobSecret(bytes))
    }

    /// The secret written by [`JobSecret::to_hex`].
    pub fn from_hex(text: &str) -> Result<JobSecret, String> {
        let text = text.trim();
        let digits = text.as_bytes();
        if digits.len() != 2 * Self::BYTES {
            return Err(format!(
                "a job secret is {} hexadecimal digits, not {}",
                2 * Self::BYTES,
                digits.len()
            ));
        }
        let mut bytes = [0u8; Self::BYTES];
        for (byte, pair) in bytes.iter_mut().zip(digits.chunks(2)) {
            let pair =
                std::str::from_utf8(pair).map_err(|_| "a job secret is hexadecimal digits")?;
            *byte = u8::from_str_radix(pair, 16)
                .map_err(|_| format!("a job secret is hexadecimal digits, not {pair:?}"))?;
        }
        Ok(JobSecret(bytes))
    }

    /// Its text form, for the environment of the job's processes.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    pub(crate) fn bytes(&self) -> &[u8; Self::BYTES] {
        &self.0
    }
}

/// Never prints the bytes: a secret in a log is no longer one.
impl fmt::Debug for JobSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JobSecret(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_round_trips_and_bad_text_is_named() {
        let s = JobSecret::generate().unwrap();
        assert_eq!(JobSecret::from_hex(&s.to_hex()).unwrap(), s);
        assert_ne!(JobSecret::generate().unwrap(), s);
        assert!(JobSecret::from_hex("abc")
            .unwrap_err()
            .contains("64 hexadecimal digits, not 3"));
        let bad = "zz".repeat(32);
        assert!(JobSecret::from_hex(&bad).unwrap_err().contains("\"zz\""));
        assert_eq!(format!("{s:?}"), "JobSecret(..)");
    }
}
