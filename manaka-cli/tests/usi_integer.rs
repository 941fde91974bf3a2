//! `Backend integer` in `manaka usi`: an `nnue` shape plays on its integer engine —
//! YaneuraOu's arithmetic — and the engine's root value is the one `manaka eval --backend
//! integer` computes; a shape without an integer engine plays on the float engine and the
//! `info string` says so.

mod common;

use common::{Scratch, json, ok, usi_until_bestmove};

fn field(line: &str, name: &str) -> f64 {
    let mut words = line.split_whitespace();
    words.find(|w| *w == name).unwrap();
    words.next().unwrap().parse().unwrap()
}

#[test]
fn backend_integer_plays_the_integer_engine_of_nnue_shapes() {
    let dir = Scratch::new("usi-integer");
    let file = dir.file("nnue.mnw");
    let path = file.as_str();
    ok(&[
        "weights",
        "init",
        "--shape",
        "pair0_d16_o1_h8_halfkp_nnue",
        "--seed",
        "5",
        "-o",
        path,
    ]);
    let moves = ["7g7f", "3c3d", "8h2b+", "3a2b"];

    let lines = usi_until_bestmove(&[
        "usi".into(),
        format!("setoption name EvalFile value {file}"),
        "setoption name Backend value integer".into(),
        "isready".into(),
        format!("position startpos moves {}", moves.join(" ")),
        "go nodes 1".into(),
    ]);
    let text = lines.join("\n");
    assert!(
        text.contains("option name Backend type combo default cpu var cpu var cuda var integer"),
        "{text}"
    );
    let loaded = lines
        .iter()
        .find(|l| l.starts_with("info string EvalFile "))
        .expect("a network description");
    assert!(loaded.contains("(integer, "), "{loaded}");
    // v_hat is the network's value at the root, 2σ(ℓ) − 1, printed to four decimals.
    let root = lines
        .iter()
        .find(|l| l.contains(" v_hat "))
        .expect("a value line");
    let v_hat = field(root, "v_hat");

    let eval = json(
        &[
            &[
                "eval",
                "--backend",
                "integer",
                "--json",
                "--weights",
                path,
                "--moves",
            ],
            &moves[..],
        ]
        .concat(),
    );
    let want = 2.0 * eval["win_prob"].as_f64().unwrap() - 1.0;
    assert!(
        (v_hat - want).abs() <= 0.00005 + 1e-9,
        "USI v_hat {v_hat}, eval {want}"
    );
    assert!(lines.last().unwrap().starts_with("bestmove "));

    // The embedded default is not an nnue shape: the float engine plays, saying why.
    let lines = usi_until_bestmove(&[
        "usi",
        "setoption name Backend value integer",
        "isready",
        "position startpos",
        "go nodes 1",
    ]);
    let loaded = lines
        .iter()
        .find(|l| l.contains("EvalFile not set"))
        .expect("a description");
    assert!(
        loaded.starts_with(
            "info string Backend integer: shape pair0_d128_o2_h512_kp has no integer engine"
        ),
        "{loaded}"
    );
    assert!(lines.last().unwrap().starts_with("bestmove "));
}

/// `EvalFile` takes YaneuraOu's nn.bin directly: recognised by its header, converted at
/// load, and with `Backend integer` played by the integer engine — the same value at the
/// root as the MNW1 file it was exported from (the integers are the same).
#[test]
fn eval_file_takes_an_nn_bin_and_backend_integer_plays_it() {
    let dir = Scratch::new("usi-nnbin");
    let (mnw, bin) = (dir.file("kp.mnw"), dir.file("nn.bin"));
    let shape = "pair0_d256_o1_h32_h232_kp_nnue";
    let (mnw_path, bin_path) = (mnw.as_str(), bin.as_str());
    ok(&[
        "weights", "init", "--shape", shape, "--seed", "9", "-o", mnw_path,
    ]);
    ok(&["weights", "export-nnue", mnw_path, "-o", bin_path]);
    let moves = "position startpos moves 7g7f 3c3d";
    let play = |file: &str| {
        usi_until_bestmove(&[
            format!("setoption name EvalFile value {file}"),
            "setoption name Backend value integer".into(),
            "isready".into(),
            moves.into(),
            "go nodes 1".into(),
        ])
    };
    let from_bin = play(&bin);
    let loaded = from_bin
        .iter()
        .find(|l| l.starts_with("info string EvalFile "))
        .expect("a network description");
    assert!(
        loaded.contains("YaneuraOu nn.bin (kp_256x2-32-32), converted to shape")
            && loaded.contains(shape)
            && loaded.contains("(integer, "),
        "{loaded}"
    );
    let v_hat = |lines: &[String]| {
        field(
            lines
                .iter()
                .find(|l| l.contains(" v_hat "))
                .expect("a value line"),
            "v_hat",
        )
    };
    let from_mnw = play(&mnw);
    assert_eq!(v_hat(&from_bin), v_hat(&from_mnw));
    assert!(from_bin.last().unwrap().starts_with("bestmove "));
}
