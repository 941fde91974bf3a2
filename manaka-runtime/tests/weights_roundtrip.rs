//! MNW1 write → read round trips for shapes covering every token, and the writer's contract
//! (streaming in any piece size, atomic rename, refusals).

use manaka_runtime::weights::format::{ALIGN, Layout};
use manaka_runtime::weights::{
    self, TensorSource, WeightFile, WeightSet, WeightWriter, WeightsError, init,
};
use manaka_shapes::Shape;
use std::path::Path;

/// Small shapes that together use every token of SPEC §2.
const SHAPES: [&str; 14] = [
    "pair2_d8_o3_h16",
    "pair0_d4_o1_h8",
    "pair3_d4_o2_h8_h24",
    "pair0_d4_o2_h8_m3",
    "pair0_d4_o1_h8_f2",
    "pair4_d4_o1_h8_lse2",
    "pair2_d4_o3_h8_ks",
    "pair0_d4_o2_h8_split",
    "pair2_d4_o1_h8_kp",
    "pair0_d4_o1_h8_halfkp",
    "pair0_d8_o1_h8_h28_kp_nnue",
    "pair0_d4_o1_h4_halfkp_nnue",
    "pair4_d4_o2_h8_h24_m2_f1_lse4_ks_split",
    "pair1_d1_o8_h1",
];

fn shape(name: &str) -> Shape {
    Shape::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Same shape, same tensors, bit for bit.
fn assert_identical(a: &dyn TensorSource, b: &dyn TensorSource, context: &str) {
    assert_eq!(a.shape(), b.shape(), "{context}");
    for spec in a.shape().tensors() {
        let x = a.tensor(&spec.name).expect("tensor in a");
        let y = b.tensor(&spec.name).expect("tensor in b");
        assert_eq!(x.len() as u64, spec.numel(), "{context}: {}", spec.name);
        assert!(
            x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()) && x.len() == y.len(),
            "{context}: tensor {} differs",
            spec.name
        );
    }
}

#[test]
fn shapes_cover_every_token() {
    let names = SHAPES.join("_");
    for token in [
        "pair", "_d", "_o", "_h", "_h2", "_m", "_f", "_lse", "_ks", "_split", "_kp", "_halfkp",
        "_nnue",
    ] {
        assert!(names.contains(token), "no test shape uses {token}");
    }
}

#[test]
fn in_memory_round_trip() {
    for name in SHAPES {
        let s = shape(name);
        let set = init::random_weights(&s, 7);
        let bytes = weights::encode(&set).expect("encode");
        let layout = Layout::new(&s);
        assert_eq!(bytes.len() as u64, layout.file_len(), "{name}");
        let file = WeightFile::from_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_identical(&set, &file, name);
        assert_eq!(file.entries().len(), s.tensors().len());
        for placed in file.entries() {
            assert_eq!(placed.offset % ALIGN, 0, "{name}: {}", placed.spec.name);
        }
        // A copy made through the trait is the same weight set.
        let copy = WeightSet::from_source(&file).expect("copy");
        assert_eq!(copy, set, "{name}");
    }
}

#[test]
fn file_round_trip_maps_and_streams() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, name) in SHAPES.iter().enumerate() {
        let s = shape(name);
        let path = dir.path().join(format!("{i}.mnw"));
        let set = init::random_weights(&s, i as u64);
        let digest = weights::write_file(&path, &set).expect("write");
        let file = WeightFile::open_expecting(&path, &s).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_identical(&set, &file, name);
        assert_eq!(file.checksum(), digest);
        assert_eq!(file.is_mapped(), file.file_len() >= 64 * 1024, "{name}");

        // Streaming generation writes exactly the bytes of the in-memory weights.
        let streamed = dir.path().join(format!("{i}.streamed.mnw"));
        let mut last = (0, 0);
        init::write_random(&streamed, &s, i as u64, &mut |done, total| {
            last = (done, total)
        })
        .expect("write_random");
        assert_eq!(
            last,
            (s.bytes(), s.bytes()),
            "{name}: progress ends at the total"
        );
        assert_eq!(
            std::fs::read(&streamed).unwrap(),
            std::fs::read(&path).unwrap(),
            "{name}"
        );
    }
    assert_no_temporaries(dir.path());
}

#[test]
fn pieces_of_any_size_give_the_same_file() {
    let s = shape("pair3_d4_o2_h8_h24_f1");
    let set = init::random_weights(&s, 3);
    let whole = weights::encode(&set).unwrap();
    let all: Vec<f32> = set.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    let dir = tempfile::tempdir().unwrap();
    for piece in [1, 7, 64, 1000, all.len()] {
        let path = dir.path().join(format!("piece{piece}.mnw"));
        let mut writer = WeightWriter::create(&path, &s).unwrap();
        for chunk in all.chunks(piece) {
            writer.write(chunk).unwrap();
        }
        assert!(writer.current().is_none());
        writer.finish().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), whole, "pieces of {piece}");
    }
}

#[test]
fn an_unfinished_writer_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("half.mnw");
    let s = shape("pair0_d4_o1_h8");
    {
        let mut writer = WeightWriter::create(&path, &s).unwrap();
        writer.write(&[1.0; 100]).unwrap();
    }
    assert!(!path.exists());
    assert_no_temporaries(dir.path());

    // Finishing early is refused and also leaves nothing.
    let mut writer = WeightWriter::create(&path, &s).unwrap();
    writer.write(&[1.0; 100]).unwrap();
    let err = writer.finish().unwrap_err();
    assert!(
        matches!(err, WeightsError::Incomplete { ref tensor, written: 100, .. } if tensor == "embed"),
        "{err}"
    );
    assert!(!path.exists());
    assert_no_temporaries(dir.path());
}

#[test]
fn rewriting_replaces_the_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("net.mnw");
    let s = shape("pair0_d4_o1_h8");
    weights::write_file(&path, &init::random_weights(&s, 1)).unwrap();
    let first = WeightFile::open(&path).unwrap();
    weights::write_file(&path, &init::random_weights(&s, 2)).unwrap();
    let second = WeightFile::open(&path).unwrap();
    assert_ne!(first.checksum(), second.checksum());
    assert_identical(&second, &init::random_weights(&s, 2), "rewritten");
}

#[test]
fn writer_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let s = shape("pair0_d4_o1_h8");
    let path = dir.path().join("w.mnw");

    let mut writer = WeightWriter::create(&path, &s).unwrap();
    let err = writer.write_tensor("b1", &[0.0; 8]).unwrap_err();
    assert!(matches!(err, WeightsError::WriteOrder { .. }), "{err}");
    assert!(err.to_string().contains("`embed`"), "{err}");
    let err = writer.write_tensor("embed", &[0.0; 3]).unwrap_err();
    assert!(matches!(err, WeightsError::WrongLength { .. }), "{err}");
    let total = s.param_count() as usize;
    let err = writer.write(&vec![0.0; total + 1]).unwrap_err();
    assert!(matches!(err, WeightsError::TooMuchData { .. }), "{err}");
    drop(writer);

    let err = WeightWriter::create(Path::new("/"), &s)
        .err()
        .expect("no file name");
    assert!(matches!(err, WeightsError::NotAFilePath { .. }), "{err}");
    let err = WeightWriter::create(&dir.path().join("no/such/dir/w.mnw"), &s)
        .err()
        .expect("missing directory");
    assert!(
        matches!(
            err,
            WeightsError::Io {
                action: "create",
                ..
            }
        ),
        "{err}"
    );

    let set = init::random_weights(&s, 1);
    let err = set.require("pair").unwrap_err();
    assert!(matches!(err, WeightsError::NoSuchTensor { .. }), "{err}");
    let err = WeightSet::new(&s, vec![vec![0.0; 4]]).unwrap_err();
    assert!(matches!(err, WeightsError::WrongLength { .. }), "{err}");
    let err = WeightSet::new(&s, vec![]).unwrap_err();
    assert!(matches!(err, WeightsError::MissingTensor { .. }), "{err}");
    assert_no_temporaries(dir.path());
}

fn assert_no_temporaries(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name();
        assert!(
            !name.to_string_lossy().contains(".tmp-"),
            "temporary file left: {name:?}"
        );
    }
}
