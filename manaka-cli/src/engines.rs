//! The shapes compiled into the `manaka` binary — listed once, here.
//!
//! Each entry expands `manaka_net!` into a fixed-size engine. The runtime's loader ([`loader`])
//! uses the compiled engine whose shape matches the weight file, and falls back to the
//! reference evaluator (saying so) for any other valid shape. For a shape not listed here,
//! `manaka build-engine SHAPE` builds a standalone engine binary.

use manaka::kernels::Simd;
use manaka::kernels::cpu::int::IntSimd;
use manaka::manaka_net;
use manaka::runtime::compiled::{FixedNetError, Precision};
use manaka::runtime::eval::EvaluatorFactory;
use manaka::runtime::loader::NetworkLoader;
use manaka::runtime::loader::{CompiledHook, IntegerHook};
use manaka::runtime::network::{Network, NetworkFactory};
use manaka::runtime::nnue::NnueError;
use manaka::runtime::weights::TensorSource;
use std::sync::Arc;

/// Something to do with a compiled engine, whatever its shape: `visit` is instantiated once
/// per compiled-in shape.
pub trait EngineVisitor {
    type Out;
    fn visit<N: Network>(self, engine: N) -> Self::Out;
}

macro_rules! compiled_shapes {
    ($($module:ident = $shape:literal),* $(,)?) => {
        $( manaka_net!($module = $shape); )*

        /// Canonical names of the compiled-in shapes.
        pub const COMPILED: &[&str] = &[$($module::SHAPE),*];

        /// Each compiled-in shape with the CUDA source of its kernels (`CUDA_SOURCE`), in
        /// the order of [`COMPILED`]; the CI compiles every one with NVRTC.
        pub const CUDA_SOURCES: &[(&str, &str)] = &[$(($module::SHAPE, $module::CUDA_SOURCE)),*];

        /// Runs `visitor` on the compiled engine for `source`'s shape; `None` if that shape
        /// is not compiled in.
        pub fn with_engine<V: EngineVisitor>(
            source: Arc<dyn TensorSource + Send + Sync>,
            visitor: V,
        ) -> Option<Result<V::Out, FixedNetError>> {
            let name = source.shape().to_string();
            $(
                if name == $module::SHAPE {
                    return Some($module::from_source(source).map(|e| visitor.visit(e)));
                }
            )*
            None
        }

        /// As [`with_engine`], at an explicit SIMD level instead of the detected one and
        /// with the hidden layers' weights at `precision` (`manaka bench --simd
        /// --precision`).
        pub fn with_engine_precision<V: EngineVisitor>(
            source: Arc<dyn TensorSource + Send + Sync>,
            simd: Simd,
            precision: Precision,
            visitor: V,
        ) -> Option<Result<V::Out, FixedNetError>> {
            let name = source.shape().to_string();
            $(
                if name == $module::SHAPE {
                    return Some($module::Engine::with_precision($module::SHAPE, source, simd, precision).map(|e| visitor.visit(e)));
                }
            )*
            None
        }
    };
}

compiled_shapes! {
    pair16_d128_o3_h512 = "pair16_d128_o3_h512",
    pair0_d128_o3_h512 = "pair0_d128_o3_h512",
    pair16_d128_o3_h512_h232 = "pair16_d128_o3_h512_h232",
    pair16_d128_o3_h512_m16 = "pair16_d128_o3_h512_m16",
    pair16_d128_o3_h512_f8 = "pair16_d128_o3_h512_f8",
    pair16_d128_o3_h512_lse4 = "pair16_d128_o3_h512_lse4",
    pair16_d128_o3_h512_ks = "pair16_d128_o3_h512_ks",
    pair16_d128_o3_h512_split = "pair16_d128_o3_h512_split",
    pair0_d128_o2_h256_kp = "pair0_d128_o2_h256_kp",
    pair0_d128_o2_h512_kp = "pair0_d128_o2_h512_kp",
    pair0_d256_o1_h32_h232_halfkp_nnue = "pair0_d256_o1_h32_h232_halfkp_nnue",
    pair0_d256_o1_h32_h232_kp_nnue = "pair0_d256_o1_h32_h232_kp_nnue",
    pair0_d16_o1_h8_halfkp_nnue = "pair0_d16_o1_h8_halfkp_nnue",
    pair4_d16_o2_h32 = "pair4_d16_o2_h32",
}

/// The integer engines (YaneuraOu's arithmetic, docs/nnue.md) of the compiled-in `nnue`
/// shapes. `manaka_net!` gives only `nnue` shapes an `IntEngine`, so they are listed again
/// here; a test (manaka-cli/tests/nnue.rs) checks that none is missing.
macro_rules! int_engines {
    ($($module:ident),* $(,)?) => {
        /// Canonical names of the shapes with a compiled-in integer engine.
        pub const COMPILED_INT: &[&str] = &[$($module::SHAPE),*];

        /// Runs `visitor` on the integer engine for `source`'s shape at integer level
        /// `simd`; `None` if that shape has no compiled-in integer engine.
        pub fn with_int_engine<V: EngineVisitor>(
            source: &dyn TensorSource,
            simd: IntSimd,
            visitor: V,
        ) -> Option<Result<V::Out, NnueError>> {
            let name = source.shape().to_string();
            $(
                if name == $module::SHAPE {
                    return Some($module::IntEngine::with_simd($module::SHAPE, source, simd).map(|e| visitor.visit(e)));
                }
            )*
            None
        }
    };
}

int_engines! {
    pair0_d256_o1_h32_h232_halfkp_nnue,
    pair0_d256_o1_h32_h232_kp_nnue,
    pair0_d16_o1_h8_halfkp_nnue,
}

/// The runtime's hook for `Backend integer`: the integer engine (best integer SIMD level of
/// this CPU) of a compiled-in `nnue` shape, `None` for other shapes.
pub fn integer_hook() -> Arc<IntegerHook> {
    Arc::new(|source: Arc<dyn TensorSource + Send + Sync>| {
        with_int_engine(source.as_ref(), IntSimd::detect(), FactoryVisitor)
            .map(|r| r.map_err(|e| e.to_string().into()))
    })
}

/// Makes an evaluator factory over the compiled engine (shared by every search thread).
struct FactoryVisitor;

impl EngineVisitor for FactoryVisitor {
    type Out = Arc<dyn EvaluatorFactory>;
    fn visit<N: Network>(self, engine: N) -> Self::Out {
        Arc::new(NetworkFactory(Arc::new(engine)))
    }
}

/// The hook the loader uses to prefer a compiled engine for a weight file's shape (see
/// `manaka_runtime::loader`), at the SIMD level detected on this CPU and the precision the
/// loader asks for.
pub fn compiled_hook() -> Arc<CompiledHook> {
    Arc::new(
        |source: Arc<dyn TensorSource + Send + Sync>, precision: Precision| {
            with_engine_precision(source, Simd::detect(), precision, FactoryVisitor)
                .map(|r| r.map_err(|e| e.to_string().into()))
        },
    )
}

/// The network loader of this binary: its compiled-in shapes, and the integer engines of its
/// `nnue` shapes. Every command that loads a network (`usi`, `eval`, `go`) goes through it;
/// `.with_precision(p)` sets the compiled engines' precision.
pub fn loader() -> NetworkLoader {
    NetworkLoader::reference_only()
        .with_compiled(compiled_hook())
        .with_integer(integer_hook())
}
