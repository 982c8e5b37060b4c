//! Reads what the Fortran side is generated from out of include/mpi.h: the
//! function declarations (`MPCRS_DECLARE(ret, Name, (params))`, one per line)
//! and the integer constants (`#define MPI_X value` and enumerators).

use std::collections::BTreeMap;

/// One parameter of a C prototype.
pub struct Param {
    /// The type without the name, spaces normalised: "const void *", "int *".
    pub ty: String,
    pub name: String,
    /// Written as an array (`int x[]`, `int ranges[][3]`): a pointer.
    pub array: bool,
}

impl Param {
    pub fn is_pointer(&self) -> bool {
        self.array || self.ty.ends_with('*')
    }

    /// The type without `const` and without its pointer.
    pub fn base(&self) -> &str {
        self.ty
            .trim_start_matches("const ")
            .trim_end_matches('*')
            .trim()
    }
}

pub struct Proto {
    pub ret: String,
    /// Without the MPI_ prefix: "Send", "Comm_get_name" (MPIX_ functions keep
    /// theirs in `prefix`).
    pub name: String,
    pub prefix: &'static str,
    pub params: Vec<Param>,
    pub varargs: bool,
}

impl Proto {
    /// The C name: MPI_Send, MPIX_Checkpoint.
    pub fn c_name(&self) -> String {
        format!("{}{}", self.prefix, self.name)
    }
}

/// Every `MPCRS_DECLARE` line of the header, in order, and the MPIX_ prototypes.
pub fn prototypes(header: &str) -> Vec<Proto> {
    let mut out = Vec::new();
    for line in header.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("MPCRS_DECLARE(") {
            let (ret, rest) = rest.split_once(',').expect("MPCRS_DECLARE(ret, ...");
            let (name, rest) = rest.split_once(',').expect("MPCRS_DECLARE(ret, name, ...");
            let params = rest
                .trim()
                .strip_suffix(')')
                .expect("MPCRS_DECLARE(...) ends the line");
            out.push(proto(ret.trim(), name.trim(), "MPI_", params));
        } else if let Some(rest) = line.strip_prefix("int MPIX_") {
            // `int MPIX_Name(params);`
            let (name, params) = rest.split_once('(').expect("MPIX_ prototype");
            let params = format!("({}", params.trim_end_matches(';'));
            out.push(proto("int", name.trim(), "MPIX_", &params));
        }
    }
    out
}

fn proto(ret: &str, name: &str, prefix: &'static str, params: &str) -> Proto {
    let inner = params
        .trim()
        .strip_prefix('(')
        .and_then(|p| p.strip_suffix(')'))
        .unwrap_or_else(|| panic!("parameters of {name} are not parenthesised: {params}"));
    let mut out = Vec::new();
    let mut varargs = false;
    for raw in inner.split(',') {
        let raw = raw.trim();
        if raw == "void" || raw.is_empty() {
            continue;
        }
        if raw == "..." {
            varargs = true;
            continue;
        }
        let array = raw.contains('[');
        let decl = raw.split('[').next().unwrap().trim();
        let split = decl
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or_else(|| panic!("parameter `{raw}` of {name} has no name"));
        let (ty, pname) = decl.split_at(split + 1);
        let ty = ty.split_whitespace().collect::<Vec<_>>().join(" ");
        // "int *x" gives "int *"; "int * x" the same.
        let ty = ty
            .replace(" *", "*")
            .replace('*', " *")
            .replace("* *", "**");
        out.push(Param {
            ty: ty.trim().to_string(),
            name: pname.to_string(),
            array,
        });
    }
    Proto {
        ret: ret.to_string(),
        name: name.to_string(),
        prefix,
        params: out,
        varargs,
    }
}

/// The header's integer constants (MPI_ and MPIX_ names), by name, with the
/// values MPICH gives them. Pointer-valued macros (MPI_BOTTOM, MPI_STATUS_IGNORE)
/// and function-like ones are left out: they have no integer value.
pub fn constants(header: &str) -> BTreeMap<String, i64> {
    let mut raw: Vec<(String, String)> = Vec::new();
    for line in header.lines() {
        if let Some(rest) = line.trim().strip_prefix("#define ") {
            let mut it = rest.splitn(2, char::is_whitespace);
            let name = it.next().unwrap_or("");
            let value = it.next().unwrap_or("").trim();
            let value = value.split("/*").next().unwrap().trim();
            if is_mpi_name(name) {
                raw.push((name.to_string(), value.to_string()));
            }
        }
    }
    let mut values = BTreeMap::new();
    // Aliases name constants defined earlier or later: resolve until stable.
    for _ in 0..4 {
        for (name, value) in &raw {
            if let Some(v) = evaluate(value, &values) {
                values.entry(name.clone()).or_insert(v);
            }
        }
    }
    for (name, v) in enumerators(header) {
        values.entry(name).or_insert(v);
    }
    values
}

/// The enumerators of every `enum { ... }` in the header, counting on from
/// the last explicit value as C does.
fn enumerators(header: &str) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    let mut rest = header;
    while let Some(at) = rest.find("enum ") {
        rest = &rest[at + 5..];
        let (Some(open), Some(close)) = (rest.find('{'), rest.find('}')) else {
            break;
        };
        if open > close || rest[..open].contains(';') {
            continue;
        }
        let mut next = 0i64;
        for item in rest[open + 1..close].split(',') {
            let item = item.trim();
            if item.is_empty() {
                continue;
            }
            let (name, value) = match item.split_once('=') {
                Some((n, v)) => (n.trim(), v.trim().parse::<i64>().ok()),
                None => (item, Some(next)),
            };
            let Some(v) = value else { continue };
            if is_mpi_name(name) {
                out.push((name.to_string(), v));
            }
            next = v + 1;
        }
        rest = &rest[close..];
    }
    out
}

fn is_mpi_name(name: &str) -> bool {
    (name.starts_with("MPI_") || name.starts_with("MPIX_"))
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// `0x4c000405`, `(-2)`, `((MPI_Comm)0x44000000)`, `MPI_LONG_LONG_INT`;
/// `None` for anything else (pointers, strings, expressions).
fn evaluate(value: &str, known: &BTreeMap<String, i64>) -> Option<i64> {
    let mut v = value.trim();
    loop {
        let before = v;
        if let Some(inner) = v.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
            v = inner.trim();
        }
        // A cast to an integer handle type: `(MPI_Comm)0x44000000`.
        if let Some(rest) = v.strip_prefix('(') {
            if let Some((ty, after)) = rest.split_once(')') {
                if ty.contains('*') {
                    return None;
                }
                if ty.starts_with("MPI_") || ty == "int" {
                    v = after.trim();
                }
            }
        }
        if v == before {
            break;
        }
    }
    if let Some(&k) = known.get(v) {
        return Some(k);
    }
    let (neg, digits) = match v.strip_prefix('-') {
        Some(d) => (true, d.trim()),
        None => (false, v),
    };
    let n = if let Some(hex) = digits.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()?
    } else {
        digits.parse::<i64>().ok()?
    };
    Some(if neg { -n } else { n })
}
