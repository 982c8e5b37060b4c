//! rails.xml as a user may mangle it: any text, the shipped file cut,
//! spliced or sprinkled with stray characters, and well-formed files with
//! any values in their fields. The reader answers every one with a
//! configuration or an error naming the file and a position inside the
//! text, never a panic; whatever it accepts selects without one. Failing
//! cases found by proptest are kept in `proptest-regressions/` and run
//! again first.

use std::path::Path;

use mpcrs_rails::{ConfigError, NetConfig};
use proptest::prelude::*;

fn shipped() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/rails.xml");
    std::fs::read_to_string(path).unwrap()
}

/// Reads `text` as file `f.xml`; checks the answer's shape.
fn read(text: &str) -> Result<NetConfig, ConfigError> {
    let r = NetConfig::parse(Path::new("f.xml"), text);
    match &r {
        Ok(cfg) => {
            // Every option of an accepted file selects, or says why not.
            for option in cfg.options().map(str::to_string).collect::<Vec<_>>() {
                if let Err(e) = cfg.select(&option) {
                    assert!(e.to_string().starts_with("f.xml"), "{e}");
                }
            }
        }
        Err(e) => {
            let shown = e.to_string();
            assert!(
                shown.starts_with("f.xml"),
                "the error does not name the file: {shown}"
            );
            assert!(!e.reason.is_empty(), "an error without a reason");
            if let Some(pos) = e.pos {
                let lines = text.split('\n').count();
                assert!(
                    pos.line >= 1 && pos.line <= lines && pos.column >= 1,
                    "{shown}: position outside the text's {lines} lines"
                );
            }
        }
    }
    r
}

/// A place in `text` picked by `at`, on a char boundary.
fn at_boundary(text: &str, at: usize) -> usize {
    let mut i = at % (text.len() + 1);
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A stretch of `text` from the place `from` picks, up to `len` bytes.
fn span(text: &str, from: usize, len: usize) -> (usize, usize) {
    let a = at_boundary(text, from);
    let mut b = (a + len).min(text.len());
    while !text.is_char_boundary(b) {
        b -= 1;
    }
    (a, b)
}

fn rail(name: &str, priority: &str, topology: &str, min: &str) -> String {
    format!(
        "<rail><name>{name}</name><priority>{priority}</priority><topology>{topology}</topology>\
         <ondemand>true</ondemand><config>c</config>\
         <gates><gate><minsize><value>{min}</value></minsize></gate></gates></rail>"
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_text_is_answered_without_a_panic(text in "\\PC{0,200}") {
        let _ = read(&text);
    }

    #[test]
    fn any_xml_like_text_is_answered_without_a_panic(
        text in "(<[a-z/!?]{0,8}( [a-z]{1,4}=\"[^\"]{0,4}\")?/?>|[a-z0-9 &;]{0,6}|<!\\[CDATA\\[|\\]\\]>|<!--|-->){0,40}"
    ) {
        let _ = read(&text);
    }

    #[test]
    fn the_shipped_file_cut_anywhere_is_answered(from in any::<usize>(), len in 0usize..400) {
        let text = shipped();
        let (a, b) = span(&text, from, len);
        let cut = format!("{}{}", &text[..a], &text[b..]);
        let _ = read(&cut);
    }

    #[test]
    fn the_shipped_file_with_stray_text_is_answered(
        edits in proptest::collection::vec((any::<usize>(), "[<>/&\"'a-z0-9 ]{1,5}|\\PC{1,3}"), 1..6)
    ) {
        let mut text = shipped();
        for (at, stray) in edits {
            let i = at_boundary(&text, at);
            text.insert_str(i, &stray);
        }
        let _ = read(&text);
    }

    #[test]
    fn the_shipped_file_with_a_part_repeated_is_answered(from in any::<usize>(), len in 1usize..300, to in any::<usize>()) {
        let text = shipped();
        let (a, b) = span(&text, from, len);
        let piece = text[a..b].to_string();
        let mut spliced = text.clone();
        spliced.insert_str(at_boundary(&text, to), &piece);
        let _ = read(&spliced);
    }

    /// Well-formed files with any values: an accepted one holds exactly the
    /// values written; a refused one names the field's position.
    #[test]
    fn any_field_values_are_taken_or_refused_by_name(
        name in "[a-z_]{0,6}|\\PC{0,4}",
        priority in "-?[0-9]{0,12}|[a-z ]{0,4}",
        topology in "ring|fully|none|[a-z]{0,5}",
        min in "[0-9]{0,22} ?(|B|KB|MB|GB|TB|kb|XB)",
    ) {
        let text = format!(
            "<mpcrs><networks><configs><config><name>c</name><driver><tcp/></driver></config></configs>\
             <rails>{}{}</rails><cli_options><cli_option><name>o</name><rails><rail>{name}</rail><rail>r</rail></rails></cli_option></cli_options></networks></mpcrs>",
            rail(&name, &priority, &topology, &min),
            rail("r", "1", "ring", "0"),
        );
        if let Ok(cfg) = read(&text) {
            if let Ok(set) = cfg.select("o") {
                if let Some(r) = set.rails.iter().find(|r| r.name != "r") {
                    prop_assert_eq!(Some(r.priority), priority.trim().parse::<i32>().ok());
                }
            }
        }
    }
}
