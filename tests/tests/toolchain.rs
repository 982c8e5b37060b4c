//! mpcrs as users coming from Open MPI or MPICH meet it: installed with
//! scripts/install.sh into a prefix whose bin/ is first on PATH, found by
//! CMake's FindMPI and Meson's dependency('mpi') (ahead of the system's Open
//! MPI), used by autotools and libtool to build a shared library, its compiler
//! wrappers queried the ways build systems query them, and its launcher run
//! with the spellings job scripts use.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use mpcrs_tests::{expect_success, profile_dir, run_command, text};

/// An installation of the tree under test in a directory of its own.
struct Installed {
    prefix: PathBuf,
    work: PathBuf,
}

impl Installed {
    fn new(name: &str) -> Installed {
        let root =
            std::env::temp_dir().join(format!("mpcrs-toolchain-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let prefix = root.join("prefix");
        let work = root.join("work");
        std::fs::create_dir_all(&work).unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/install.sh");
        let o = run_command(
            Command::new("bash")
                .arg(&script)
                .arg("--from")
                .arg(profile_dir())
                .arg(&prefix),
            Duration::from_secs(120),
        );
        expect_success(&o, "scripts/install.sh");
        Installed { prefix, work }
    }

    fn bin(&self, name: &str) -> PathBuf {
        self.prefix.join("bin").join(name)
    }

    /// `program args` in the work directory with the prefix's bin/ first on PATH.
    fn run(&self, program: &str, args: &[&str]) -> Output {
        self.run_in(&self.work, program, args)
    }

    fn run_in(&self, dir: &Path, program: &str, args: &[&str]) -> Output {
        let path = format!(
            "{}:{}",
            self.prefix.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        run_command(
            Command::new(program)
                .args(args)
                .current_dir(dir)
                .env("PATH", path)
                .env_remove("PKG_CONFIG_PATH"),
            Duration::from_secs(300),
        )
    }

    /// Copies the project tests/projects/NAME and the common sources into the work directory.
    fn project(&self, name: &str) -> PathBuf {
        let projects = Path::new(env!("CARGO_MANIFEST_DIR")).join("projects");
        let dir = self.work.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for from in [projects.join("common"), projects.join(name)] {
            for entry in std::fs::read_dir(&from).unwrap() {
                let entry = entry.unwrap();
                std::fs::copy(entry.path(), dir.join(entry.file_name())).unwrap();
            }
        }
        dir
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(self.prefix.parent().unwrap());
        }
    }
}

fn ok(o: &Output, what: &str) -> String {
    let (out, err) = text(o);
    assert!(
        o.status.success(),
        "{what} failed ({:?}):\n{out}\n{err}",
        o.status
    );
    out + &err
}

/// The libraries and run path a program or library was linked with.
fn dynamic_section(file: &Path) -> String {
    let o = run_command(
        Command::new("readelf").arg("-d").arg(file),
        Duration::from_secs(10),
    );
    expect_success(&o, "readelf -d")
}

#[test]
fn cmake_find_mpi_finds_the_installed_tree_first_on_path_and_ctest_runs_through_its_mpiexec() {
    let inst = Installed::new("cmake");
    let src = inst.project("cmake");
    let build = inst.work.join("cmake-build");
    std::fs::create_dir_all(&build).unwrap();
    let configured = ok(
        &inst.run_in(&build, "cmake", &[src.to_str().unwrap()]),
        "cmake",
    );
    let lib = inst.prefix.join("lib/libmpi.so");
    assert!(
        configured.contains(&format!("MPI_C_LIBRARIES={}", lib.display())),
        "{configured}"
    );
    assert!(
        configured.contains(&format!(
            "MPIEXEC_EXECUTABLE={}",
            inst.bin("mpiexec").display()
        )),
        "{configured}"
    );
    assert!(
        configured.contains("MPI_Fortran_HAVE_F77_HEADER=TRUE MPI_Fortran_HAVE_F90_MODULE=TRUE"),
        "{configured}"
    );
    ok(&inst.run_in(&build, "make", &[]), "make");
    // The shared library was built by the same flags (no -pie in a -shared link).
    assert!(dynamic_section(&build.join("libringlib.so")).contains("libmpi.so"));
    let tested = ok(
        &inst.run_in(&build, "ctest", &["--output-on-failure"]),
        "ctest",
    );
    assert!(
        tested.contains("100% tests passed, 0 tests failed out of 4"),
        "{tested}"
    );
}

#[test]
fn meson_dependency_mpi_finds_the_installed_tree_first_on_path_for_c_cxx_and_fortran() {
    let inst = Installed::new("meson");
    let src = inst.project("meson");
    let configured = ok(
        &inst.run_in(&src, "meson", &["setup", "build"]),
        "meson setup",
    );
    let version = env!("CARGO_PKG_VERSION");
    for language in ["c", "cpp", "fortran"] {
        assert!(
            configured.contains(&format!(
                "Run-time dependency MPI for {language} found: YES {version}"
            )),
            "{configured}"
        );
    }
    let tested = ok(
        &inst.run_in(&src, "meson", &["test", "-C", "build", "-v"]),
        "meson test",
    );
    assert_eq!(tested.matches("sum 6").count(), 3, "{tested}");
    let linked = dynamic_section(&src.join("build/ring_f"));
    assert!(
        linked.contains(&inst.prefix.join("lib").display().to_string()),
        "{linked}"
    );
}

#[test]
fn autotools_and_libtool_build_a_shared_library_with_mpicc() {
    let inst = Installed::new("autotools");
    let src = inst.project("autotools");
    ok(&inst.run_in(&src, "autoreconf", &["-fi"]), "autoreconf");
    let dest = inst.work.join("installed-app");
    ok(
        &inst.run_in(
            &src,
            "./configure",
            &["CC=mpicc", &format!("--prefix={}", dest.display())],
        ),
        "configure",
    );
    ok(&inst.run_in(&src, "make", &[]), "make");
    ok(&inst.run_in(&src, "make", &["install"]), "make install");
    assert!(dynamic_section(&dest.join("lib/libring.so")).contains("libmpi.so"));
    // libtool's uninstalled ./ring is a shell script that runs .libs/ring:
    // each copy is one rank.
    for program in [dest.join("bin/ring"), src.join("ring")] {
        let out = ok(
            &inst.run_in(&src, "mpirun", &["-np", "4", program.to_str().unwrap()]),
            "mpirun -np 4",
        );
        assert_eq!(out.trim(), "sum 6", "{}", program.display());
    }
}

#[test]
fn compiler_wrappers_answer_the_queries_of_build_systems() {
    let inst = Installed::new("wrappers");
    let include = inst.prefix.join("include").display().to_string();
    let lib = inst.prefix.join("lib").display().to_string();
    // Open MPI's queries, with one dash and two.
    for (query, expect) in [
        ("-showme:compile", format!("-I{include}")),
        ("--showme:link", format!("-L{lib}")),
        ("-showme:incdirs", include.clone()),
        ("-showme:libdirs", lib.clone()),
        ("-showme:libs", "mpi".to_string()),
        ("-compile_info", format!("-I{include}")),
        ("-link-info", "-lmpi".to_string()),
    ] {
        let out = ok(&inst.run("mpicc", &[query]), query);
        assert!(out.contains(&expect), "{query}: {out}");
        // Build systems apply these to shared libraries too: no PIE flags.
        assert!(
            !out.contains("pie") && !out.contains("PIE"),
            "{query}: {out}"
        );
    }
    let version = ok(
        &inst.run("mpifort", &["-showme:version"]),
        "-showme:version",
    );
    assert!(
        version.contains("mpcrs") && version.contains("Language: Fortran"),
        "{version}"
    );
    // MPICH's `-v`: the wrapper's identity first, then the compiler's.
    let v = ok(&inst.run("mpicc", &["-v"]), "mpicc -v");
    assert!(
        v.starts_with(&format!(
            "mpicc for mpcrs version {}",
            env!("CARGO_PKG_VERSION")
        )),
        "{v}"
    );
    assert!(v.contains("gcc version"), "{v}");
    // Compile-only, preprocess-only and shared-library commands get no link or PIE flags.
    for (args, must_not) in [
        (vec!["-show", "-c", "x.c"], vec!["-lmpi", "-pie"]),
        (vec!["-show", "-E", "x.c"], vec!["-lmpi", "-pie"]),
        (
            vec!["-show", "-shared", "-fPIC", "x.c", "-o", "libx.so"],
            vec!["-pie", "-fPIE"],
        ),
    ] {
        let out = ok(&inst.run("mpicc", &args), "mpicc -show");
        for word in must_not {
            assert!(
                !out.split_whitespace().any(|w| w == word),
                "{args:?}: {out}"
            );
        }
    }
    // And the shared library really builds and links.
    let src = inst.project("autotools");
    ok(
        &inst.run_in(
            &src,
            "mpicc",
            &["-shared", "-fPIC", "lib.c", "-o", "libr.so"],
        ),
        "mpicc -shared",
    );
    assert!(dynamic_section(&src.join("libr.so")).contains("libmpi.so"));
    // Unknown queries are refused by name.
    let o = inst.run("mpicc", &["-showme:nonsense"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("-showme:nonsense"), "{}", text(&o).1);
    // Every name build systems look for is installed and is ours.
    for name in [
        "mpicc", "mpicxx", "mpic++", "mpiCC", "mpifort", "mpif90", "mpif77",
    ] {
        let out = ok(&inst.run(name, &["-showme:version"]), name);
        assert!(out.contains("mpcrs"), "{name}: {out}");
    }
    for pc in [
        "mpi",
        "mpi-c",
        "mpi-cxx",
        "mpi-fort",
        "mpich",
        "ompi",
        "ompi-c",
        "ompi-cxx",
        "ompi-fort",
    ] {
        let out = ok(&inst.run("pkg-config", &["--libs", pc]), pc);
        assert!(out.contains(&format!("-L{lib}")), "{pc}: {out}");
    }
}

#[test]
fn job_script_spellings_of_mpirun_and_mpiexec_run_an_installed_program() {
    let inst = Installed::new("jobs");
    let src = inst.project("cmake");
    let ring = src.join("ring_c");
    ok(
        &inst.run_in(
            &src,
            "mpicc",
            &["-O2", "ring.c", "-o", ring.to_str().unwrap()],
        ),
        "mpicc",
    );
    let ring = ring.to_str().unwrap();
    for args in [
        vec!["mpirun", "-np", "4", ring],
        vec![
            "mpirun",
            "--oversubscribe",
            "--bind-to",
            "none",
            "-np",
            "4",
            ring,
        ],
        vec!["mpirun", "-n", "4", "--map-by", "core", ring],
        vec!["mpiexec", "-n", "4", ring],
        vec!["mpiexec", "-np", "4", "-wdir", "/", ring],
        vec!["mpiexec", "-genv", "OMP_NUM_THREADS", "1", "-n", "4", ring],
    ] {
        let out = ok(&inst.run(args[0], &args[1..]), &args.join(" "));
        assert_eq!(out.trim(), "sum 6", "{args:?}");
    }
}
