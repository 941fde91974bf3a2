//! The library API a user's crate sees (docs/library.md): the generated engine is named after
//! its module and shape, and `App` loads weights for every `EvalFile` value as `manaka usi`
//! does, runs the USI protocol, and searches.

use manaka::prelude::*;
use manaka::runtime::usi::eval_file::DEFAULT_SHAPE;
use manaka::runtime::weights::{init, write_file};
use std::path::PathBuf;

manaka_net!(Tiny = "pair0_d8_o1_h8");
manaka_net!("pair0_d8_o1_h16");
manaka_net!(Trained = "pair0_d128_o2_h512_kp");

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("library-api");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{name}-{}", std::process::id()))
}

/// Errors and `Debug` show `Tiny::Engine` and the shape, not the layer composition inside it
/// (`Net<Native, Manaka<Powers<8, 1, 1>, …>, Head<…>>`).
#[test]
fn the_engine_type_is_named_after_its_module_and_shape() {
    let name = std::any::type_name::<Tiny::Engine>();
    assert!(name.ends_with("Tiny::Engine"), "{name}");
    assert!(!name.contains('<'), "{name}");
    let engine = Tiny::app().random_weights(3).network().unwrap();
    let debug = format!("{engine:?}");
    assert!(debug.starts_with("Engine<pair0_d8_o1_h8>("), "{debug}");
    assert_eq!(<Tiny::Engine as CompiledNetwork>::SHAPE, "pair0_d8_o1_h8");
    assert!(std::any::type_name::<pair0_d8_o1_h16::Engine>().ends_with("pair0_d8_o1_h16::Engine"));
}

/// `EvalFile` as in `manaka usi`: empty runs the app's default (random weights of the shape
/// unless chosen), `builtin:material` the material evaluator, a file of the shape the
/// compiled engine, a file of another shape the reference evaluator, a missing file an error
/// naming it.
#[test]
fn eval_file_values_load_as_in_manaka_usi() {
    let app = Tiny::app();
    let unset = app.load("").unwrap().description;
    assert!(
        unset.contains("random weights (seed 1) of shape pair0_d8_o1_h8")
            && unset.contains("compiled"),
        "{unset}"
    );
    let material = app.load("builtin:material").unwrap().description;
    assert!(material.contains("material"), "{material}");

    let own = scratch("own.mnw");
    write_file(&own, &init::random_weights(&Tiny::shape(), 5)).unwrap();
    let loaded = app.load(own.to_str().unwrap()).unwrap().description;
    assert!(
        loaded.contains("compiled") && loaded.contains(own.to_str().unwrap()),
        "{loaded}"
    );

    let other = scratch("other.mnw");
    write_file(&other, &init::random_weights(&pair0_d8_o1_h16::shape(), 5)).unwrap();
    let reference = app.load(other.to_str().unwrap()).unwrap().description;
    assert!(reference.contains("reference evaluator"), "{reference}");

    let missing = app.load("/no/such/file.mnw").err().unwrap().to_string();
    assert!(missing.contains("/no/such/file.mnw"), "{missing}");

    // Chosen defaults: a file (its description says it is the default), embedded bytes.
    let by_file = Tiny::app().weights(&own).load("").unwrap().description;
    assert!(
        by_file.starts_with("EvalFile not set: default") && by_file.contains("compiled"),
        "{by_file}"
    );
    let bytes: &'static [u8] = Box::leak(std::fs::read(&own).unwrap().into_boxed_slice());
    let embedded = Tiny::app().embedded(bytes).load("").unwrap().description;
    assert!(
        embedded.contains("embedded weights") && embedded.contains("compiled"),
        "{embedded}"
    );
    let wrong: &'static [u8] = Box::leak(std::fs::read(&other).unwrap().into_boxed_slice());
    let refused = Tiny::app()
        .embedded(wrong)
        .network()
        .err()
        .unwrap()
        .to_string();
    assert!(refused.contains("pair0_d8_o1_h16"), "{refused}");

    // The shape of the binary's embedded network plays that network by default.
    assert_eq!(<Trained::Engine as CompiledNetwork>::SHAPE, DEFAULT_SHAPE);
    let trained = Trained::app().load("").unwrap().description;
    assert!(
        trained.contains("embedded default") && trained.contains("compiled"),
        "{trained}"
    );
    for f in [own, other] {
        std::fs::remove_file(f).unwrap();
    }
}

/// The USI program on a script: the engine's network is announced at `isready` and `go`
/// answers a legal move.
#[test]
fn run_usi_on_answers_a_script() {
    let script = "usi\nisready\nposition startpos moves 7g7f\ngo nodes 32\nquit\n";
    let out = manaka::runtime::usi::SharedBuffer::default();
    Tiny::app()
        .run_usi_on(script.as_bytes(), Box::new(out.clone()))
        .unwrap();
    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    assert!(text.contains("usiok") && text.contains("readyok"), "{text}");
    assert!(
        text.contains("info string EvalFile not set: random weights"),
        "{text}"
    );
    let best = text
        .lines()
        .find_map(|l| l.strip_prefix("bestmove "))
        .unwrap();
    let mut pos = Position::startpos();
    pos.do_move(pos.parse_usi_move("7g7f").unwrap());
    assert!(
        pos.parse_usi_move(best.split_whitespace().next().unwrap())
            .is_ok(),
        "{text}"
    );
}

/// One search on the default weights, and a searcher along a few moves.
#[test]
fn search_and_searcher_play_legal_moves() {
    let app = Tiny::app().random_weights(2);
    let result = app
        .search(&Position::startpos(), &SearchLimits::simulations(16))
        .unwrap();
    assert!(Position::startpos().is_legal(result.best_move.unwrap()));
    let mut searcher = app.searcher(SearchConfig::default()).unwrap();
    assert!(
        searcher.description().contains("seed 2"),
        "{}",
        searcher.description()
    );
    let mut pos = Position::startpos();
    for _ in 0..4 {
        let m = searcher
            .run(&pos, &SearchLimits::simulations(16))
            .best_move
            .unwrap();
        assert!(pos.is_legal(m));
        pos.do_move(m);
    }
}

manaka_net!(Nnue = "pair0_d8_o1_h8_kp_nnue");

/// USI `Backend integer`: an `nnue` shape runs its integer engine, any other shape its float
/// engine, saying why.
#[test]
fn backend_integer_runs_the_integer_engine_of_nnue_shapes() {
    let script = "usi\nsetoption name Backend value integer\nisready\ngo nodes 16\nquit\n";
    let run = |app_output: &dyn Fn(manaka::runtime::usi::SharedBuffer)| {
        let out = manaka::runtime::usi::SharedBuffer::default();
        app_output(out.clone());
        String::from_utf8(out.0.lock().unwrap().clone()).unwrap()
    };
    let nnue = run(&|out| {
        Nnue::app()
            .run_usi_on(script.as_bytes(), Box::new(out))
            .unwrap()
    });
    let loaded = nnue
        .lines()
        .find(|l| l.contains("random weights"))
        .unwrap_or("");
    assert!(
        loaded.contains("integer") && !loaded.contains("float engine"),
        "{nnue}"
    );
    assert!(nnue.contains("bestmove "), "{nnue}");
    let tiny = run(&|out| {
        Tiny::app()
            .run_usi_on(script.as_bytes(), Box::new(out))
            .unwrap()
    });
    assert!(
        tiny.contains("has no integer engine") && tiny.contains("compiled"),
        "{tiny}"
    );
}

/// `App::load_at` (the USI option `Precision` of an app's engine) runs the engine's hidden
/// layers at the precision asked for, and says so; an `nnue` shape stays f32 with a note.
#[test]
fn an_app_loads_its_engine_at_a_precision() {
    use manaka::runtime::compiled::Precision;
    let net = Tiny::app().load_at("", Precision::Int8).unwrap();
    assert_eq!(net.precision, Precision::Int8);
    assert!(
        net.factory.name().contains("int8 W1/W2"),
        "{}",
        net.factory.name()
    );
    let nnue = Nnue::app().load_at("", Precision::Bf16).unwrap();
    assert_eq!(nnue.precision, Precision::F32);
    let note = nnue.precision_note(Precision::Bf16).unwrap();
    assert!(note.contains("nnue shape"), "{note}");
}
