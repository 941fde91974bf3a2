//! `manaka lab`'s HTTP API over a raw socket: the page and its files are served, the
//! inspector's numbers are `manaka eval --json`'s, and every bad request gets a 4xx with a
//! JSON message while the server keeps answering (docs/lab.md).

mod common;

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

/// A running `manaka lab --port 0`, killed on drop.
struct Lab {
    child: Child,
    addr: String,
}

impl Lab {
    fn start(extra: &[&str]) -> Lab {
        let mut child = Command::new(env!("CARGO_BIN_EXE_manaka"))
            .args(["lab", "--port", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start manaka lab");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .strip_prefix("manaka lab: http://")
            .unwrap_or_else(|| panic!("no URL in {line:?}"));
        let addr = url.split('/').next().unwrap().to_string();
        Lab { child, addr }
    }

    /// Sends raw request bytes; returns the status and the body.
    fn raw(&self, request: &[u8]) -> (u16, String) {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.write_all(request).unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {text:?}"));
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
        (status, body.to_string())
    }

    /// HTTP/1.0, so that a long answer comes whole rather than in chunks.
    fn request(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        let req = format!(
            "{method} {path} HTTP/1.0\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.raw(req.as_bytes())
    }

    /// A refusal: the status and the JSON error message.
    fn refused(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        let (status, text) = self.request(method, path, body);
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{path} {body:?}: not JSON ({e}): {text:?}"));
        let msg = v["error"].as_str().expect("an error message").to_string();
        assert!(
            (400..500).contains(&status),
            "{path} {body:?}: {status} {msg}"
        );
        (status, msg)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn bad_requests_get_4xx_with_a_message_and_the_server_keeps_answering() {
    let lab = Lab::start(&[]);
    let long = format!(
        "{{\"sfen\": \"startpos\", \"pad\": \"{}\"}}",
        "x".repeat(70_000)
    );
    let cases: &[(&str, &str, &str, u16, &str)] = &[
        ("POST", "/api/inspect", "{not json", 400, "not valid JSON"),
        ("POST", "/api/inspect", "[1, 2]", 400, "JSON object"),
        (
            "POST",
            "/api/inspect",
            r#"{"sfen": "9/9 x"}"#,
            400,
            "bad sfen",
        ),
        (
            "POST",
            "/api/inspect",
            r#"{"sfen": 5}"#,
            400,
            "must be a string",
        ),
        (
            "POST",
            "/api/inspect",
            r#"{"moves": ["7g7f", "7g7f"]}"#,
            400,
            "move 2 '7g7f'",
        ),
        (
            "POST",
            "/api/inspect",
            r#"{"moves": ["zz"]}"#,
            400,
            "move 1 'zz'",
        ),
        (
            "POST",
            "/api/inspect",
            r#"{"moves": "7g7f"}"#,
            400,
            "array of USI strings",
        ),
        (
            "POST",
            "/api/inspect",
            r#"{"moves": [7]}"#,
            400,
            "USI string",
        ),
        ("POST", "/api/inspect", &long, 413, "over 65536 bytes"),
        (
            "POST",
            "/api/search",
            r#"{"simulations": 0}"#,
            400,
            "simulations",
        ),
        (
            "POST",
            "/api/search",
            r#"{"simulations": 1e9}"#,
            400,
            "simulations",
        ),
        ("GET", "/api/inspect", "", 405, "POST"),
        ("POST", "/", "{}", 405, "GET only"),
        ("GET", "/etc/passwd", "", 404, "no such page"),
        ("GET", "/../Cargo.toml", "", 404, "no such page"),
    ];
    for &(method, path, body, status, needle) in cases {
        let (got, msg) = lab.refused(method, path, body);
        assert_eq!(got, status, "{method} {path} {body:.60}: {msg}");
        assert!(
            msg.contains(needle),
            "{method} {path}: {msg:?} lacks {needle:?}"
        );
    }
    // Legal but unusual positions are answered, not fatal: no kings, kings only, every
    // piece in hand, no legal move.
    for sfen in [
        "9/9/9/9/9/9/9/9/9 b - 1",
        "4k4/9/9/9/9/9/9/9/4K4 b 2R2B4G4S4N4L18P 1",
        "4k4/9/9/9/9/9/9/9/9 w - 1",
        "8k/7G1/7G1/9/9/9/9/9/K8 w - 1",
    ] {
        for path in ["/api/inspect", "/api/search"] {
            let body = serde_json::json!({ "sfen": sfen, "simulations": 8 }).to_string();
            let (status, text) = lab.request("POST", path, &body);
            assert_eq!(status, 200, "{path} {sfen}: {text}");
        }
    }
    // A body announced larger than the cap is refused before it is read.
    let (status, _) = lab.raw(
        b"POST /api/inspect HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 100000000\r\n\r\n{}",
    );
    assert_eq!(status, 413);
    // Garbage instead of HTTP: the server answers (or closes) and stays up.
    let mut s = TcpStream::connect(&lab.addr).unwrap();
    s.write_all(b"\x00\x01 hello\r\n\r\n").unwrap();
    drop(s);
    let (status, page) = lab.request("GET", "/", "");
    assert_eq!(status, 200);
    assert!(page.contains("Mini NNUE lab") && page.contains("/inspector.js"));
    for file in ["/lab.css", "/lab5.js", "/inspector.js"] {
        let (status, text) = lab.request("GET", file, "");
        assert_eq!(status, 200, "{file}");
        assert!(text.len() > 500, "{file}");
    }
}

/// The inspector's value, win probability, cp and policy are `manaka eval --json`'s for the
/// same position and network, on a weight file and on the embedded default.
#[test]
fn the_inspector_evaluates_as_manaka_eval_does() {
    let dir = common::Scratch::new("lab-http");
    let weights = dir.file("tiny.mnw");
    common::ok(&[
        "weights",
        "init",
        "--shape",
        "pair4_d16_o2_h32",
        "--seed",
        "3",
        "-o",
        &weights,
    ]);
    let w = weights.as_str();
    for extra in [vec!["--weights", w], vec![]] {
        let lab = Lab::start(&extra);
        let moves = ["7g7f", "3c3d", "8h2b+", "3a2b", "B*5e", "5a4b"];
        for n in [0, 2, 5, 6] {
            let line = &moves[..n];
            let body = serde_json::json!({ "sfen": "startpos", "moves": line }).to_string();
            let (status, text) = lab.request("POST", "/api/inspect", &body);
            assert_eq!(status, 200, "{text}");
            let page: Value = serde_json::from_str(&text).unwrap();
            let mut args = vec!["eval", "--json", "--sfen", "startpos"];
            args.extend(&extra);
            if n > 0 {
                args.push("--moves");
                args.extend(line);
            }
            let eval = common::json(&args);
            let ev = &page["eval"];
            assert_eq!(page["position"]["sfen"], eval["sfen"]);
            for key in ["value_logit", "win_prob", "cp"] {
                assert_eq!(ev[key], eval[key], "{key} after {line:?} ({extra:?})");
            }
            let (got, want) = (
                ev["policy"].as_array().unwrap(),
                eval["policy"].as_array().unwrap(),
            );
            assert_eq!(got.len(), want.len(), "legal moves after {line:?}");
            for (i, (g, w)) in got.iter().zip(want).enumerate() {
                assert_eq!(g, w, "policy row {i} after {line:?} ({extra:?})");
            }
            // The page's legal moves (what its board lets a user click) are `manaka moves`'.
            let mut margs = vec!["moves", "--json", "--sfen", "startpos"];
            if n > 0 {
                margs.push("--moves");
                margs.extend(line);
            }
            let mut want: Vec<String> = common::json(&margs)["moves"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["usi"].as_str().unwrap().to_string())
                .collect();
            let mut got: Vec<String> = page["position"]["legal"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_str().unwrap().to_string())
                .collect();
            want.sort();
            got.sort();
            assert_eq!(got, want, "legal moves after {line:?}");
            // Both perspectives' tokens, side to move first; the last move's delta.
            let persp = page["perspectives"].as_array().unwrap();
            assert_eq!(persp.len(), 2);
            assert_eq!(persp[0]["color"], page["position"]["side"]);
            assert!(persp[0]["tokens"].as_array().unwrap().len() >= 38);
            assert_eq!(page["last_move"].is_null(), n == 0);
        }
        let (status, text) = lab.request(
            "POST",
            "/api/search",
            r#"{"sfen": "startpos", "moves": ["7g7f"], "simulations": 16}"#,
        );
        assert_eq!(status, 200, "{text}");
        let r: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(r["simulations"], 16);
        let best = r["bestmove"].as_str().unwrap();
        let legal = common::json(&["moves", "--json", "--moves", "7g7f"]).to_string();
        assert!(legal.contains(&format!("\"{best}\"")), "{best} not legal");
        assert_eq!(r["pv"][0], best);
    }
}

/// HalfKP: a move of Black's king rebuilds Black's view (every id holds the king square) and
/// is a plain delta for White's; the tokens name the pieces.
#[test]
fn a_king_move_refreshes_its_halfkp_perspective() {
    let dir = common::Scratch::new("lab-halfkp");
    let weights = dir.file("halfkp.mnw");
    common::ok(&[
        "weights",
        "init",
        "--shape",
        "pair0_d16_o1_h8_halfkp_nnue",
        "--seed",
        "5",
        "-o",
        &weights,
    ]);
    let lab = Lab::start(&["--weights", &weights]);
    let (status, text) = lab.request(
        "POST",
        "/api/inspect",
        r#"{"moves": ["7g7f", "3c3d", "5i4h"]}"#,
    );
    assert_eq!(status, 200, "{text}");
    let page: Value = serde_json::from_str(&text).unwrap();
    let deltas = &page["last_move"]["deltas"];
    assert_eq!(page["last_move"]["usi"], "5i4h");
    assert_eq!(deltas[0]["color"], "b");
    assert_eq!(deltas[0]["refresh"], true);
    assert_eq!(deltas[1]["refresh"], false);
    // White sees Black's king move as no BonaPiece change at all (kings are not BonaPieces).
    assert_eq!(deltas[1]["removed"], serde_json::json!([]));
    // Black (the side to move is White now, so Black's view is second) has 38 tokens, all
    // with its king on 4h: id = 4h's index × 1548 + BonaPiece, 4h = (4−1)·9 + 7 = 34.
    let black = &page["perspectives"][1];
    assert_eq!(black["color"], "b");
    let tokens = black["tokens"].as_array().unwrap();
    assert_eq!(tokens.len(), 38);
    for t in tokens {
        assert_eq!(t["id"].as_u64().unwrap() / 1548, 34, "{t}");
        assert!(
            t["meaning"].as_str().unwrap().starts_with("own K 4h × "),
            "{t}"
        );
    }
}
