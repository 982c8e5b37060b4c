//! config/rails.xml and malformed files: every error names file:line:column.

use std::path::{Path, PathBuf};

use mpcrs_rails::{Gate, NetConfig, Topology};

fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/rails.xml")
}

#[test]
fn the_shipped_configuration_has_the_documented_options() {
    let cfg = NetConfig::load(&shipped()).unwrap();
    let d = cfg.select("default").unwrap();
    assert_eq!(
        d.rails.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["shm_mpi", "tcp_mpi"]
    );
    let m = cfg.select("multirail_tcp").unwrap();
    assert_eq!(m.rails[0].name, "tcp_large");
    assert_eq!(m.rails[0].priority, 10);
    assert_eq!(m.rails[0].gates, vec![Gate::MinSize(32 * 1024)]);
    assert_eq!(m.rails[1].name, "tcp_mpi");
    assert_eq!(m.rails[1].topology, Topology::Ring);
    assert_eq!(m.rails[1].priority, 1);
    let e = cfg.select("nope").unwrap_err();
    assert!(
        e.to_string().contains("unknown network option \"nope\""),
        "{e}"
    );
    assert!(e.to_string().contains("multirail_tcp"), "{e}");
}

fn error_of(xml: &str) -> String {
    NetConfig::parse(Path::new("bad.xml"), xml)
        .unwrap_err()
        .to_string()
}

const CONFIGS: &str = "<configs><config><name>t</name><driver><tcp/></driver></config></configs>";

fn file(rails: &str, options: &str) -> String {
    format!("<mpcrs>\n<networks>\n{CONFIGS}\n<rails>\n{rails}\n</rails>\n<cli_options>\n{options}\n</cli_options>\n</networks>\n</mpcrs>\n")
}

const RING: &str =
    "<rail><name>r</name><priority>1</priority><topology>ring</topology><config>t</config></rail>";
const OPTION: &str = "<cli_option><name>o</name><rails><rail>r</rail></rails></cli_option>";

#[test]
fn a_valid_minimal_file_is_accepted() {
    let cfg = NetConfig::parse(Path::new("ok.xml"), &file(RING, OPTION)).unwrap();
    assert_eq!(cfg.select("o").unwrap().rails.len(), 1);
}

#[test]
fn xml_syntax_errors_have_a_position() {
    let e = error_of("<mpcrs>\n<networks>\n<configs></networks>\n</mpcrs>");
    assert!(e.starts_with("bad.xml:3:"), "{e}");
    assert!(e.contains("XML syntax"), "{e}");
    let e = error_of("<mpcrs>\n  <networks>\n");
    assert!(e.starts_with("bad.xml:"), "{e}");
}

#[test]
fn unknown_driver() {
    let xml = "<mpcrs>\n<networks>\n<configs><config><name>x</name>\n<driver><carrier_pigeon/></driver></config></configs>\n</networks></mpcrs>";
    let e = error_of(xml);
    assert!(
        e.starts_with("bad.xml:4:9:") && e.contains("unknown driver <carrier_pigeon>"),
        "{e}"
    );
}

#[test]
fn rail_naming_a_missing_config() {
    let rail = "<rail><name>r</name><topology>ring</topology><config>missing</config></rail>";
    let e = error_of(&file(rail, OPTION));
    assert!(
        e.starts_with("bad.xml:5:") && e.contains("names config \"missing\", which is not defined"),
        "{e}"
    );
}

#[test]
fn option_without_a_ring_rail() {
    let rail = "<rail><name>r</name><topology>none</topology><config>t</config></rail>";
    let e = error_of(&file(rail, OPTION));
    assert!(
        e.starts_with("bad.xml:8:1:") && e.contains("no rail with topology ring"),
        "{e}"
    );
}

#[test]
fn bad_size_unit() {
    let rail = "<rail><name>r</name><topology>ring</topology><config>t</config>\n<gates><gate><minsize><value>32XB</value></minsize></gate></gates></rail>";
    let e = error_of(&file(rail, OPTION));
    assert!(
        e.starts_with("bad.xml:6:14:") && e.contains("unknown unit \"XB\""),
        "{e}"
    );
}

#[test]
fn option_naming_a_missing_rail_and_other_mistakes() {
    let opt = "<cli_option><name>o</name><rails><rail>ghost</rail></rails></cli_option>";
    let e = error_of(&file(RING, opt));
    assert!(
        e.contains("uses rail \"ghost\", which is not defined"),
        "{e}"
    );
    let bad_topo = "<rail><name>r</name><topology>star</topology><config>t</config></rail>";
    assert!(error_of(&file(bad_topo, OPTION)).contains("unknown topology \"star\""));
    let bad_prio = "<rail><name>r</name><priority>high</priority><topology>ring</topology><config>t</config></rail>";
    assert!(error_of(&file(bad_prio, OPTION)).contains("priority \"high\" is not an integer"));
    let e = NetConfig::load(Path::new("/nonexistent/rails.xml"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("/nonexistent/rails.xml: cannot read"), "{e}");
}
