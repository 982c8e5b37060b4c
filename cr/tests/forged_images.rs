//! Images whose checksums hold but whose fields were forged (any value in any
//! field of the header or region table, then sealed again), or that were cut
//! short anywhere: the reader and the verifier answer with an error naming the
//! file, never a panic, a huge allocation or a read out of bounds, and what
//! they accept has a layout a restorer can use. Failing cases found by
//! proptest are kept in `proptest-regressions/` and run again first.

use std::path::PathBuf;

use mpcrs_cr::image::{self, ExeIdentity, ImageHeader, Region, HAS_DATA, HEADER_SIZE, PAGE};
use proptest::prelude::*;

/// A region of the generated image: pages, protection, whether it has
/// contents, its path.
#[derive(Debug, Clone)]
struct Spec {
    gap_pages: u64,
    pages: u64,
    prot: u32,
    data: bool,
    path: String,
}

fn spec() -> impl Strategy<Value = Spec> {
    (0u64..4, 1u64..4, 0u32..8, any::<bool>(), "[a-z/]{0,12}").prop_map(
        |(gap_pages, pages, prot, data, path)| Spec {
            gap_pages,
            pages,
            prot,
            data,
            path,
        },
    )
}

/// A valid image of `specs` (contents: a pattern per region), as bytes.
fn image_of(specs: &[Spec]) -> Vec<u8> {
    let mut regions = Vec::new();
    let mut at = 0x4000_0000u64;
    for s in specs {
        at += s.gap_pages * PAGE;
        regions.push(Region {
            start: at,
            end: at + s.pages * PAGE,
            prot: s.prot,
            flags: if s.data { HAS_DATA } else { 0 },
            data_offset: 0,
            stored: 0,
            crc: 0,
            path: s.path.clone(),
        });
        at += s.pages * PAGE;
    }
    let meta_len = image::metadata_size(&regions);
    let mut contents = Vec::new();
    for (i, r) in regions.iter_mut().enumerate() {
        if r.has_data() {
            let bytes: Vec<u8> = (0..r.len()).map(|b| (b as usize * 7 + i) as u8).collect();
            r.data_offset = meta_len + contents.len() as u64;
            r.stored = r.len();
            r.crc = crc32c::crc32c(&bytes);
            contents.extend(bytes);
        }
    }
    let header = ImageHeader {
        exe: ExeIdentity {
            path: "/bin/forged".into(),
            size: 1,
            crc: 2,
        },
        runtime: ExeIdentity {
            path: "/lib/libforged.so".into(),
            size: 3,
            crc: 4,
        },
        brk: 0x5000_0000,
        regions,
        parent: None,
        owner: None,
        meta_crc: 0,
    };
    let mut bytes = image::encode(&header);
    image::seal(&mut bytes);
    bytes.extend(contents);
    bytes
}

/// Where the fields are: the header's (offset, width), then each region's.
fn fields(regions: usize) -> Vec<(usize, usize)> {
    let mut f = vec![(8, 4), (16, 8), (24, 4), (32, 8), (40, 4), (44, 4), (52, 4)];
    f.extend([
        (HEADER_SIZE - 40, 8),
        (HEADER_SIZE - 20, 4),
        (HEADER_SIZE - 16, 8),
    ]);
    for i in 0..regions {
        let at = HEADER_SIZE + i * image::REGION_SIZE;
        f.extend([
            (at, 8),
            (at + 8, 8),
            (at + 16, 4),
            (at + 20, 4),
            (at + 24, 8),
            (at + 32, 4),
            (at + 36, 4),
            (at + 40, 8),
        ]);
    }
    f
}

/// Values worth trying in a field: anything, and near the edges.
fn value() -> impl Strategy<Value = u64> {
    prop_oneof![
        any::<u64>(),
        0u64..16,
        (0u64..64).prop_map(|k| k * PAGE),
        Just(u64::MAX),
        Just(u32::MAX as u64),
        Just(1 << 47),
    ]
}

/// Seals the metadata again as the reader will take it: as long as the
/// (perhaps forged) region count and paths' length say, when the file holds
/// that much (otherwise the reader refuses it as cut short).
fn reseal(bytes: &mut [u8]) {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as u64;
    let raw = HEADER_SIZE as u64 + u32_at(40) * image::REGION_SIZE as u64 + u32_at(44);
    let meta_len = raw.div_ceil(PAGE) * PAGE;
    if meta_len <= bytes.len() as u64 {
        image::seal(&mut bytes[..meta_len as usize]);
    }
}

fn scratch(case: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mpcrs-forged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{:08x}.img", crc32c::crc32c(case)));
    std::fs::write(&path, case).unwrap();
    path
}

/// Reads and verifies the image in `bytes`: an error must name the file; an
/// accepted image has regions in order inside the user address space (or
/// kernel ones) with their data inside the file.
fn read_and_verify(bytes: &[u8]) {
    let path = scratch(bytes);
    match image::read_header(&path) {
        Err(e) => assert!(
            e.to_string().starts_with(&path.display().to_string()),
            "{e}"
        ),
        Ok((_, h)) => {
            let mut end = 0;
            for r in &h.regions {
                assert!(
                    r.start < r.end && r.start % PAGE == 0 && r.end % PAGE == 0,
                    "{r:?}"
                );
                if r.flags & image::KERNEL == 0 {
                    assert!(r.start >= end && r.end <= image::USER_TOP, "{r:?}");
                    end = r.end;
                }
                if r.has_data() {
                    assert!(r.data_offset.checked_add(r.stored).unwrap() <= bytes.len() as u64);
                }
            }
        }
    }
    if let Err(e) = image::verify(&path) {
        assert!(
            e.to_string().starts_with(&path.display().to_string()),
            "{e}"
        );
    }
    let _ = std::fs::remove_file(&path);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_forged_field_under_a_valid_checksum_is_refused_or_harmless(
        specs in prop::collection::vec(spec(), 1..5),
        pick in any::<prop::sample::Index>(),
        v in value(),
    ) {
        let mut bytes = image_of(&specs);
        let fields = fields(specs.len());
        let (at, width) = fields[pick.index(fields.len())];
        bytes[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
        reseal(&mut bytes);
        read_and_verify(&bytes);
    }

    #[test]
    fn an_image_cut_short_anywhere_is_refused(
        specs in prop::collection::vec(spec(), 1..5),
        cut in any::<prop::sample::Index>(),
    ) {
        let bytes = image_of(&specs);
        let at = cut.index(bytes.len());
        read_and_verify(&bytes[..at]);
        // The whole image reads back.
        let path = scratch(&bytes);
        prop_assert!(image::verify(&path).is_ok());
        let _ = std::fs::remove_file(&path);
    }
}

/// Fields that are named when forged (each sealed under a valid checksum).
#[test]
fn each_forged_field_is_named() {
    let specs = vec![
        Spec {
            gap_pages: 0,
            pages: 2,
            prot: 3,
            data: true,
            path: "a".into(),
        },
        Spec {
            gap_pages: 1,
            pages: 1,
            prot: 1,
            data: true,
            path: "b".into(),
        },
    ];
    let r1 = HEADER_SIZE + image::REGION_SIZE;
    let cases: [(usize, usize, u64, &str); 6] = [
        (r1, 8, 0x4000_0000, "starts before the end of region 0"),
        (
            r1 + 8,
            8,
            0x4000_0000,
            "not whole pages of the user address space in order",
        ),
        (r1 + 20, 4, 0x80 | HAS_DATA as u64, "unknown flags 0x80"),
        (r1 + 16, 4, 9, "protection 0x9"),
        (r1 + 40, 8, u64::MAX, "ends past any file"),
        (
            r1 + 36,
            4,
            1000,
            "paths' lengths add up to 1001 bytes, the header says 2",
        ),
    ];
    for (at, width, v, named) in cases {
        let mut bytes = image_of(&specs);
        bytes[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
        reseal(&mut bytes);
        let path = scratch(&bytes);
        let e = image::read_header(&path)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains(named),
            "field at {at} = {v:#x}: {e:?} should say {named:?}"
        );
        let _ = std::fs::remove_file(&path);
    }
}
