//! Names of the code in the ranks' program copies, for the report of a rank
//! that faults: "in crash_here+0x14 (./prog)".
//!
//! dladdr would only see the copies' dynamic symbols (programs are rarely
//! linked with -rdynamic) and takes the dynamic loader's lock, which a
//! signal handler must not. So the program's full symbol table is read once,
//! before any rank runs, into sorted tables that the fault handler searches
//! without allocating or locking.

use std::fmt;
use std::sync::OnceLock;

use mpcrs_elf::Image;

struct CodeNames {
    /// The program as mpcrs-run was given it.
    program: String,
    /// The program's functions by address (relative to a copy's base):
    /// start, size, and where the name lies in `names`.
    functions: Vec<(u64, u64, std::ops::Range<usize>)>,
    names: String,
    /// Where each local rank's copy is loaded, ascending.
    bases: Vec<usize>,
}

static CODE_NAMES: OnceLock<CodeNames> = OnceLock::new();

/// Records the functions of `image` (the program `program`) and the load
/// bases of its copies, and has fault reports name them.
pub(crate) fn install(program: &str, image: &Image, mut bases: Vec<usize>) {
    // A program without a readable symbol table is reported by address only.
    let symbols = image.function_symbols().unwrap_or_default();
    let mut names = String::new();
    let functions = symbols
        .into_iter()
        .map(|f| {
            let at = names.len();
            names.push_str(&f.name);
            (f.start, f.size, at..names.len())
        })
        .collect();
    bases.sort_unstable();
    let _ = CODE_NAMES.set(CodeNames {
        program: program.to_string(),
        functions,
        names,
        bases,
    });
    mpcrs_scheduler::set_code_namer(name_code);
}

/// Writes " in FUNCTION+0xOFFSET (PROGRAM)" for an address `pc` inside a
/// function of a rank's copy; nothing for other addresses. Runs in the fault
/// handler: binary searches over tables made before the ranks ran.
fn name_code(pc: usize, out: &mut dyn fmt::Write) -> fmt::Result {
    let Some(names) = CODE_NAMES.get() else {
        return Ok(());
    };
    let copies_below = names.bases.partition_point(|&b| b <= pc);
    let Some(&base) = copies_below.checked_sub(1).and_then(|i| names.bases.get(i)) else {
        return Ok(());
    };
    let offset = (pc - base) as u64;
    let before = names.functions.partition_point(|f| f.0 <= offset);
    let Some((start, size, name)) = before.checked_sub(1).and_then(|i| names.functions.get(i))
    else {
        return Ok(());
    };
    // Past a function's end lies code the table does not name (or another
    // object's): named only within a function's size.
    if offset >= start + size {
        return Ok(());
    }
    write!(
        out,
        " in {}+{:#x} ({})",
        &names.names[name.clone()],
        offset - start,
        names.program
    )
}
