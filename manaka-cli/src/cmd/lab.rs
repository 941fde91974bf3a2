//! `manaka lab`: the Mini NNUE Lab and the network inspector, a local web page (docs/lab.md).
//!
//! A small synchronous HTTP server (tiny_http) serves the page's files, embedded in the
//! binary, and a JSON API over the runtime (`lab/api.rs`). It answers one request at a time:
//! the page is for one person at a time, and a short search is the slowest thing it does.

mod api;

use anyhow::{Context, Result, anyhow};
use std::io::{Read, Write};
use std::path::PathBuf;
use tiny_http::{Header, Method, Request, Response, Server};

/// Start the Mini NNUE Lab: a web page on this machine (127.0.0.1) with two parts.
///
/// Part 1, the lab (5×5, king and silver): click squares to place pieces and watch the
/// HalfKP-style features (king square × 25 + silver square), the 625→16→8→1 network's h1, h2
/// and score, an incremental update checked against a full recomputation, and training on
/// the king–silver distance task with loss curves.
///
/// Part 2, the inspector: set a position on a 9×9 board (SFEN, or click a piece then a
/// square) and see what the real network computes — the tokens of both perspectives, the
/// last move's token delta, the accumulator blocks, the hidden activations, value, win
/// probability, cp, the top policy moves as arrows, and a short Gumbel search on request.
/// Value, cp and policy are exactly what `manaka eval` prints for the same position.
///
/// The page needs no network connection: its files are inside the binary.
///
/// Example: `manaka lab --weights net.mnw --open`.
#[derive(clap::Args)]
pub struct Args {
    /// MNW1 weight file for the inspector (default: the network embedded in the binary, as
    /// `manaka eval` with no --weights).
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
    /// Port to listen on; 0 picks a free one (the URL printed says which).
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Address to listen on. The default is this machine only; anything else lets other
    /// machines reach the page (it has no authentication).
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Open the page in the default browser (xdg-open / open) once the server listens.
    #[arg(long)]
    open: bool,
}

/// The largest request body accepted; the API's requests are a SFEN and a move list.
pub const MAX_BODY: usize = 64 * 1024;

/// The page's files, embedded so the page works offline.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "/",
        "text/html; charset=utf-8",
        include_str!("lab/assets/index.html"),
    ),
    (
        "/lab.css",
        "text/css; charset=utf-8",
        include_str!("lab/assets/lab.css"),
    ),
    (
        "/lab5.js",
        "text/javascript; charset=utf-8",
        include_str!("lab/assets/lab5.js"),
    ),
    (
        "/inspector.js",
        "text/javascript; charset=utf-8",
        include_str!("lab/assets/inspector.js"),
    ),
];

pub fn run(args: Args) -> Result<()> {
    let lab = api::Lab::load(args.weights.as_deref())?;
    let server = Server::http((args.host.as_str(), args.port))
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| {
            format!(
                "cannot listen on {}:{} (is the port in use? --port 0 picks a free one)",
                args.host, args.port
            )
        })?;
    let addr = server
        .server_addr()
        .to_ip()
        .context("the server has no IP address")?;
    let url = format!("http://{addr}/");
    println!(
        "manaka lab: {url}  (network {}; Ctrl-C stops)",
        lab.description()
    );
    std::io::stdout().flush().ok();
    if !addr.ip().is_loopback() {
        eprintln!(
            "note: listening on {addr}, not loopback: anyone who can reach this machine can use the page"
        );
    }
    if args.open {
        open_browser(&url);
    }
    for request in server.incoming_requests() {
        // A failed write means the browser went away; the next request is unaffected.
        let _ = serve(&lab, request);
    }
    Ok(())
}

fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(opener).arg(url).spawn() {
        eprintln!("note: cannot start {opener} ({e}); open {url} yourself");
    }
}

/// An answer: status, content type, body.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(status: u16, value: &serde_json::Value) -> Reply {
        Reply {
            status,
            content_type: "application/json",
            body: value.to_string().into_bytes(),
        }
    }

    /// A refusal: a 4xx status and `{"error": message}`.
    pub fn error(status: u16, message: impl Into<String>) -> Reply {
        Reply::json(status, &serde_json::json!({ "error": message.into() }))
    }
}

fn serve(lab: &api::Lab, mut request: Request) -> std::io::Result<()> {
    // Every refusal is a reply from `route`; a panic would be a bug. As a last resort it
    // becomes a 500 and the server goes on (`Lab` is read-only, so nothing is left half
    // changed); the panic hook has already printed it as an internal error.
    let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        route(lab, &mut request)
    }))
    .unwrap_or_else(|_| {
        Reply::json(
            500,
            &serde_json::json!({ "error": "internal error (a bug; please report it); the server goes on" }),
        )
    });
    let header = |k: &str, v: &str| Header::from_bytes(k.as_bytes(), v.as_bytes()).expect("ascii");
    let response = Response::from_data(reply.body)
        .with_status_code(reply.status)
        .with_header(header("Content-Type", reply.content_type))
        .with_header(header("Cache-Control", "no-store"));
    request.respond(response)
}

fn route(lab: &api::Lab, request: &mut Request) -> Reply {
    // Query strings are not used; `/?x` is `/`.
    let path = request.url().split('?').next().unwrap_or("").to_string();
    let method = request.method().clone();
    if let Some((_, kind, text)) = ASSETS.iter().find(|(p, _, _)| *p == path) {
        return match method {
            Method::Get | Method::Head => Reply {
                status: 200,
                content_type: kind,
                body: text.as_bytes().to_vec(),
            },
            _ => Reply::error(405, format!("{path} answers GET only")),
        };
    }
    match (path.as_str(), method) {
        ("/api/network", Method::Get) => Reply::json(200, &lab.network()),
        ("/api/inspect" | "/api/search", Method::Post) => match read_json(request) {
            Ok(body) if path == "/api/inspect" => lab.inspect(&body),
            Ok(body) => lab.search(&body),
            Err(reply) => reply,
        },
        ("/api/network", _) => Reply::error(405, "/api/network answers GET only"),
        ("/api/inspect" | "/api/search", _) => {
            Reply::error(405, format!("{path} answers POST with a JSON body only"))
        }
        _ => Reply::error(
            404,
            format!("no such page or API: {path} (the page is at /, the API under /api/)"),
        ),
    }
}

/// Reads a request body of at most [`MAX_BODY`] bytes as JSON.
fn read_json(request: &mut Request) -> std::result::Result<serde_json::Value, Reply> {
    let too_big = || Reply::error(413, format!("request body over {MAX_BODY} bytes"));
    if request.body_length().is_some_and(|n| n > MAX_BODY) {
        return Err(too_big());
    }
    let mut body = Vec::new();
    request
        .as_reader()
        .take(MAX_BODY as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| Reply::error(400, format!("cannot read the request body: {e}")))?;
    if body.len() > MAX_BODY {
        return Err(too_big());
    }
    serde_json::from_slice(&body)
        .map_err(|e| Reply::error(400, format!("the body is not valid JSON: {e}")))
}
