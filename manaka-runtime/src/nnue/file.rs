//! YaneuraOu's nn.bin, byte for byte (little-endian throughout), as its loader reads it
//! (`evaluate_nnue.cpp` `ReadHeader` / `ReadParameters`, `nnue_feature_transformer.h`,
//! `layers/affine_transform*.h`):
//!
//! | offset | bytes | content |
//! |---|---|---|
//! | 0 | 4 | u32 version `0x7AF32F16` |
//! | 4 | 4 | u32 hash of the architecture |
//! | 8 | 4 | u32 length `L` of the architecture string |
//! | 12 | L | architecture string (not checked by the loader) |
//! | 12+L | 4 | u32 feature transformer hash |
//! | | 2·d | int16 biases |
//! | | 2·d·T | int16 weights, feature-major (`T` rows of `d`) |
//! | | 4 | u32 network hash |
//! | | per layer | int32 biases `out`, then int8 weights `out × padded(in)`, row-major |
//!
//! Layers in order `2d → h1`, `h1 → h2`, `h2 → 1`; `padded(n)` rounds up to a multiple of
//! 32 and the padding columns are zero. Nothing follows the last layer.

use super::NnueError;
use super::arch::{Architecture, SHIPPED, VERSION, padded};
use super::quant::{IntLayer, IntWeights};
use crate::data::io::{open_regular, read_bounded};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

/// A parsed nn.bin.
#[derive(Clone, Debug)]
pub struct NnueFile {
    pub architecture: Architecture,
    /// The architecture string as stored (YaneuraOu's loader ignores its content).
    pub string: String,
    pub weights: IntWeights,
}

/// Writes `weights` (of a shipped architecture) as an nn.bin to `out`; returns the bytes
/// written.
pub fn write_to(out: &mut impl Write, weights: &IntWeights) -> Result<u64, NnueError> {
    let arch = weights
        .architecture()
        .map_err(|reason| NnueError::NotExportable {
            shape: weights.shape.to_string(),
            reason: reason.to_string(),
        })?;
    let io = |source| NnueError::Io {
        path: "<nn.bin stream>".into(),
        source,
    };
    let string = arch.string();
    let mut w = |bytes: &[u8]| out.write_all(bytes).map_err(io);
    w(&VERSION.to_le_bytes())?;
    w(&arch.hash().to_le_bytes())?;
    w(&(string.len() as u32).to_le_bytes())?;
    w(string.as_bytes())?;
    w(&arch.feature_transformer_hash().to_le_bytes())?;
    let i16s: Vec<u8> = weights
        .ft_biases
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    w(&i16s)?;
    // The table is large (64 MB for HalfKP 256): write it in pieces.
    for chunk in weights.ft_weights.chunks(1 << 16) {
        let bytes: Vec<u8> = chunk.iter().flat_map(|v| v.to_le_bytes()).collect();
        w(&bytes)?;
    }
    w(&arch.network_hash().to_le_bytes())?;
    for layer in weights.hidden.iter().chain([&weights.output]) {
        let b: Vec<u8> = layer.biases.iter().flat_map(|v| v.to_le_bytes()).collect();
        w(&b)?;
        let stride = padded(layer.inputs);
        let mut rows = vec![0u8; layer.outputs * stride];
        for (o, row) in rows.chunks_exact_mut(stride).enumerate() {
            for (dst, &src) in row
                .iter_mut()
                .zip(&layer.weights[o * layer.inputs..(o + 1) * layer.inputs])
            {
                *dst = src as u8;
            }
        }
        w(&rows)?;
    }
    Ok(arch.file_len(string.len()) as u64)
}

/// Writes `weights` as an nn.bin at `path`, through a temporary file renamed into place (a
/// failed write never leaves a partial nn.bin behind).
pub fn write(path: &Path, weights: &IntWeights) -> Result<u64, NnueError> {
    let io = |source| NnueError::Io {
        path: path.to_path_buf(),
        source,
    };
    // Temporaries of writers killed before they finished go first.
    crate::data::io::remove_stale_temps(path);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(name);
    let result = (|| {
        let file = std::fs::File::create(&tmp).map_err(io)?;
        let mut out = std::io::BufWriter::new(file);
        let n = write_to(&mut out, weights).map_err(|e| match e {
            NnueError::Io { source, .. } => io(source),
            e => e,
        })?;
        let file = out.into_inner().map_err(|e| io(e.into_error()))?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)?;
        Ok(n)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A bounds-checked cursor that names what it was reading when the bytes ran out.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &dyn Fn() -> String) -> Result<&'a [u8], NnueError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| NnueError::Truncated {
                what: what(),
                offset: self.at as u64,
                end: self.at as u64 + n as u64,
                len: self.bytes.len() as u64,
            })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u32(&mut self, what: &str) -> Result<u32, NnueError> {
        let b = self.take(4, &|| what.to_string())?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Reads a hash and compares it with `expected`.
    fn hash(
        &mut self,
        what: &'static str,
        expected: u32,
        arch: &Architecture,
    ) -> Result<(), NnueError> {
        let offset = self.at as u64;
        let found = self.u32(&format!("the {what} hash"))?;
        if found != expected {
            return Err(NnueError::LayerHash {
                what,
                offset,
                found,
                expected,
                architecture: arch.name(),
            });
        }
        Ok(())
    }
}

/// The architecture string as text for messages and reports (bytes that are not UTF-8
/// are replaced).
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Parses an nn.bin. The architecture is recognised by the header hash, which identifies
/// it exactly (the architecture string varies between YaneuraOu versions and is only
/// reported); then the feature transformer and network hashes, every parameter and the
/// length are checked.
pub fn decode(bytes: &[u8]) -> Result<NnueFile, NnueError> {
    let mut c = Cursor { bytes, at: 0 };
    let version = c.u32("the version")?;
    if version != VERSION {
        return Err(NnueError::Version {
            found: version,
            expected: VERSION,
        });
    }
    let hash = c.u32("the architecture hash")?;
    let len = c.u32("the architecture string's length")? as usize;
    // The hash decides before the string is taken, so that an unknown architecture is
    // reported as such even when [`read`] loaded only the string's first bytes.
    let arch = Architecture::from_hash(hash).ok_or_else(|| {
        let known: Vec<String> = SHIPPED
            .iter()
            .map(|a| format!("{} ({:#010x})", a.name(), a.hash()))
            .collect();
        let rest = bytes.get(c.at..).unwrap_or(&[]);
        let string = text(&rest[..rest.len().min(len)]);
        let mut s: String = string.chars().take(STRING_SHOWN).collect();
        if s.len() < len {
            s.push('…');
        }
        NnueError::UnknownArchitecture {
            hash,
            known: known.join(", "),
            string: s,
        }
    })?;
    let string = text(c.take(len, &|| format!("the {len}-byte architecture string"))?);
    c.hash(
        "feature transformer",
        arch.feature_transformer_hash(),
        &arch,
    )?;
    let d = arch.d;
    let t = arch.features.dimensions();
    let i16s = |b: &[u8]| {
        b.chunks_exact(2)
            .map(|p| i16::from_le_bytes([p[0], p[1]]))
            .collect::<Vec<i16>>()
    };
    let ft_biases = i16s(c.take(2 * d, &|| "the feature transformer biases".into())?);
    let ft_weights = i16s(c.take(2 * d * t, &|| "the feature transformer weights".into())?);
    c.hash("network", arch.network_hash(), &arch)?;
    let names = ["first hidden layer", "second hidden layer", "output layer"];
    let mut layers = Vec::new();
    for (dims, name) in arch.layers().into_iter().zip(names) {
        let b = c.take(4 * dims.outputs, &|| format!("the {name}'s biases"))?;
        let biases = b
            .chunks_exact(4)
            .map(|p| i32::from_le_bytes([p[0], p[1], p[2], p[3]]))
            .collect();
        let stride = padded(dims.inputs);
        let w = c.take(dims.outputs * stride, &|| format!("the {name}'s weights"))?;
        // The padding columns are never multiplied by a real input; they are dropped.
        let weights = w
            .chunks_exact(stride)
            .flat_map(|row| row[..dims.inputs].iter().map(|&v| v as i8))
            .collect();
        layers.push(IntLayer {
            inputs: dims.inputs,
            outputs: dims.outputs,
            biases,
            weights,
        });
    }
    if c.at != bytes.len() {
        return Err(NnueError::TrailingBytes {
            offset: c.at as u64,
            extra: (bytes.len() - c.at) as u64,
            architecture: arch.name(),
        });
    }
    let output = layers.pop().expect("three layers");
    let weights = IntWeights {
        shape: arch.shape(),
        ft_biases,
        ft_weights,
        hidden: layers,
        output,
    };
    Ok(NnueFile {
        architecture: arch,
        string,
        weights,
    })
}

/// Characters of an unknown architecture's string that its error shows.
const STRING_SHOWN: usize = 300;

/// Reads and parses the nn.bin at `path`: a regular file, read no further than its
/// architecture allows. The header (version, hash, string length) fixes the file's length
/// ([`Architecture::file_len`]), so a longer file is refused before it is read; a file whose
/// header names no known architecture is read only as far as its error needs.
pub fn read(path: &Path) -> Result<NnueFile, NnueError> {
    let io = |source| NnueError::Io {
        path: path.to_path_buf(),
        source,
    };
    let (mut file, len) = open_regular(path).map_err(io)?;
    let mut head = Vec::with_capacity(12);
    (&mut file).take(12).read_to_end(&mut head).map_err(io)?;
    let word = |i: usize| {
        head.get(4 * i..4 * i + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let string_len = word(2).unwrap_or(0) as usize;
    let known = (word(0) == Some(VERSION))
        .then(|| word(1).and_then(Architecture::from_hash))
        .flatten();
    let limit = match known {
        Some(arch) => {
            let expected = arch.file_len(string_len) as u64;
            if len > expected {
                return Err(NnueError::TrailingBytes {
                    offset: expected,
                    extra: len - expected,
                    architecture: arch.name(),
                });
            }
            expected
        }
        // Version or architecture unknown: the error shows at most the string's first
        // characters (up to 4 bytes each).
        None => 12 + string_len.min(4 * STRING_SHOWN) as u64,
    };
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    let bytes = read_bounded(file, len.min(limit), limit, "").map_err(io)?;
    decode(&bytes)
}

/// The byte offset of value `index` of `tensor` (a Manaka tensor name) in an nn.bin of
/// `arch` whose architecture string is `string_len` bytes long.
pub fn offset_of(arch: &Architecture, string_len: usize, tensor: &str, index: usize) -> u64 {
    let ft = 12 + string_len + 4;
    let net = ft + arch.feature_transformer_bytes() + 4;
    let layers = arch.layers();
    let layer_start = |k: usize| net + layers[..k].iter().map(|l| l.file_bytes()).sum::<usize>();
    let in_layer = |k: usize, weights: bool| {
        let l = layers[k];
        if weights {
            layer_start(k)
                + 4 * l.outputs
                + (index / l.inputs) * padded(l.inputs)
                + index % l.inputs
        } else {
            layer_start(k) + 4 * index
        }
    };
    (match tensor {
        "embed.bias" => ft + 2 * index,
        "embed" => ft + 2 * arch.d + 2 * index,
        "b1" => in_layer(0, false),
        "w1" => in_layer(0, true),
        "b2" => in_layer(1, false),
        "w2" => in_layer(1, true),
        "value.b" => in_layer(2, false),
        _ => in_layer(2, true),
    }) as u64
}
