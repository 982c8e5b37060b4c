//! Sizes as users write them in options, variables and configuration files:
//! `512`, `64K`, `32KB`, `4 MB`, `1GiB` (binary units).

/// Parses a size like `32KB`, `4 MB`, `1G`, `512` (bytes); binary units.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits: String = t.chars().take_while(|c| c.is_ascii_digit()).collect();
    let unit = t[digits.len()..].trim().to_ascii_uppercase();
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("size {s:?} does not start with a number"))?;
    let mult: u64 = match unit.as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        "T" | "TB" | "TIB" => 1 << 40,
        other => {
            return Err(format!(
                "size {s:?} has an unknown unit {other:?} (use B, K, M, G or T)"
            ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("size {s:?} is too large"))
}

/// A size, `off`, or `auto` (the reader decides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeOrAuto {
    Auto,
    Off,
    Bytes(u64),
}

impl SizeOrAuto {
    pub fn parse(s: &str) -> Result<SizeOrAuto, String> {
        match s.trim() {
            "auto" => Ok(SizeOrAuto::Auto),
            "off" | "0" => Ok(SizeOrAuto::Off),
            t => parse_size(t)
                .map(SizeOrAuto::Bytes)
                .map_err(|e| format!("{e}; or auto, or off")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_with_units() {
        assert_eq!(parse_size("32KB"), Ok(32768));
        assert_eq!(parse_size(" 4 MB "), Ok(4 << 20));
        assert_eq!(parse_size("8m"), Ok(8 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("512"), Ok(512));
        assert!(parse_size("12XB").unwrap_err().contains("unknown unit"));
        assert!(parse_size("KB").is_err());
        assert!(parse_size("99999999999T")
            .unwrap_err()
            .contains("too large"));
    }

    #[test]
    fn auto_off_or_a_size() {
        assert_eq!(SizeOrAuto::parse("auto"), Ok(SizeOrAuto::Auto));
        assert_eq!(SizeOrAuto::parse("off"), Ok(SizeOrAuto::Off));
        assert_eq!(SizeOrAuto::parse("2G"), Ok(SizeOrAuto::Bytes(2 << 30)));
        assert!(SizeOrAuto::parse("lots")
            .unwrap_err()
            .contains("or auto, or off"));
    }
}
