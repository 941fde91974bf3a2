//! `manaka_net!`: a network shape string becomes a fixed-size engine at compile time.
//!
//! ```ignore
//! manaka::manaka_net!("pair16_d128_o3_h512");          // module `pair16_d128_o3_h512`
//! manaka::manaka_net!(Baseline = "pair16_d128_o3_h512"); // module `Baseline`
//!
//! let engine = pair16_d128_o3_h512::load("net.mnw".as_ref())?;
//! ```
//!
//! The shape is parsed by `manaka-shapes` — the same parser the runtime uses at load time —
//! and an invalid shape is a compile error carrying that parser's message, spanned on the
//! literal. A valid shape expands to a module holding its constants (every dimension), the
//! engine as a composition of the runtime's layer types (`Fixed`, for the baseline
//! `Net<Native, Manaka<Powers<128, 3, 1>, Pairs<16, 0>, NoMoments, NoField, false, 400, 800>,
//! Head<Dense<Affine<800, 512>, Relu>, Value<512>, Policy<512, 0>>>`: token space,
//! accumulator, head; `manaka_runtime::compiled`), the engine type (`Engine`: a struct of the
//! module's own around `Fixed`, so that compiler errors and `Debug` say `<module>::Engine` and
//! the shape; it implements `Network` and `CompiledNetwork`), its accumulator type (`State`),
//! loaders (`load`, `from_source`), `app()` (the engine as a USI engine, search, self-play,
//! training or benchmark: `manaka_runtime::app`, docs/library.md), and the CUDA source
//! specialised for the shape; `nnue` shapes also get the integer engine.

use manaka_shapes::{FeatureSpace, Shape};
use proc_macro::TokenStream;
use proc_macro2::{Literal, Span, TokenStream as TokenStream2};
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token};

struct Input {
    name: Option<Ident>,
    shape: LitStr,
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name = if input.peek(Ident) {
            let name: Ident = input.parse()?;
            if input.is_empty() {
                // `manaka_net!(pair16_d128_o3_h512)`: the shape without its quotes.
                return Err(syn::Error::new(
                    name.span(),
                    format!(
                        "a shape is a string literal: write `manaka_net!(\"{name}\")`, or `manaka_net!(Name = \"shape\")` to name the module"
                    ),
                ));
            }
            input.parse::<Token![=]>()?;
            Some(name)
        } else {
            None
        };
        let shape: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected a shape string such as \"pair16_d128_o3_h512\", or `Name = \"shape\"`",
            )
        })?;
        if !input.is_empty() {
            return Err(input.error("unexpected tokens after the shape string"));
        }
        Ok(Input { name, shape })
    }
}

/// The engine type of `shape` as the runtime's layer types (`manaka_runtime::compiled`):
/// `Net<tokens, accumulator, Head<hidden layers, Value<hl>, Policy<hl, f>>>`, every size from
/// `Shape::dims`, and every flag of the shape (feature space, `nnue`, `ks`, a second hidden
/// layer, blocks present or not) a choice of type.
fn composition(shape: &Shape) -> TokenStream2 {
    let manaka_shapes::Dims {
        d,
        o,
        g,
        pair,
        lse,
        m,
        mt,
        f,
        ff,
        inp,
        input,
        h,
        h2,
        hl,
        ..
    } = shape.dims();
    let present = (pair > 0, m > 0, f > 0, h2 > 0);
    // Unsuffixed, so that the expansion reads `Affine<800, 512>`.
    let [d, o, g, pair, lse, m, mt, f, ff, inp, input, h, h2, hl] =
        [d, o, g, pair, lse, m, mt, f, ff, inp, input, h, h2, hl].map(Literal::usize_unsuffixed);
    let tokens = match shape.features {
        FeatureSpace::Native => quote!(Native),
        FeatureSpace::Kp => quote!(Kp),
        FeatureSpace::HalfKp => quote!(HalfKp),
    };
    let (accumulator, activation) = if shape.nnue {
        (quote!(Nnue<#d, #input>), quote!(ClippedRelu))
    } else {
        let pairs = if present.0 {
            quote!(Pairs<#pair, #lse>)
        } else {
            quote!(NoPairs)
        };
        let moments = if present.1 {
            quote!(Moments<#m, #mt>)
        } else {
            quote!(NoMoments)
        };
        let field = if present.2 {
            quote!(Field<#f, #ff>)
        } else {
            quote!(NoField)
        };
        let ks = shape.ks;
        (
            quote!(Manaka<Powers<#d, #o, #g>, #pairs, #moments, #field, #ks, #inp, #input>),
            quote!(Relu),
        )
    };
    let first = quote!(Dense<Affine<#input, #h>, #activation>);
    let hidden = if present.3 {
        quote!(Then<#first, Dense<Affine<#h, #h2>, #activation>>)
    } else {
        first
    };
    quote!(Net<#tokens, #accumulator, Head<#hidden, Value<#hl>, Policy<#hl, #f>>>)
}

/// Expands a shape name into a fixed-size engine module. See the crate docs.
#[proc_macro]
pub fn manaka_net(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as Input);
    match expand(&input) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand(input: &Input) -> syn::Result<TokenStream2> {
    let text = input.shape.value();
    let shape = Shape::parse(&text)
        .map_err(|e| syn::Error::new(input.shape.span(), format!("invalid Manaka shape: {e}")))?;
    let canonical = shape.to_string();
    let module = match &input.name {
        Some(n) => n.clone(),
        None => Ident::new(&canonical, Span::call_site()),
    };
    // Every size from the one `Dims` the engines check their constants against and the
    // CUDA generator writes (manaka_shapes::Dims).
    let manaka_shapes::Dims {
        t,
        d,
        o,
        g,
        pair: p,
        m,
        f,
        inp,
        input: in_,
        h,
        h2,
        hl,
        ..
    } = shape.dims();
    let fixed = composition(&shape);
    let params = shape.param_count();
    let bytes = shape.bytes();
    let doc = format!(
        "The fixed-size engine for shape `{canonical}`: {params} parameters ({bytes} bytes of f32), \
         head input {in_}, hidden {h}{}.",
        if h2 > 0 {
            format!(" → {h2}")
        } else {
            String::new()
        }
    );
    // The engine type is a struct of its own (not an alias of the composition `Fixed`) so that
    // compiler errors and rustdoc name it `<module>::Engine` rather than a list of constants.
    let engine_doc = format!(
        "The engine for shape `{canonical}` (a [`Network`](::manaka::runtime::network::Network); \
         its `Debug` names the shape). Load it with [`load`] or [`from_source`], or run it with \
         [`app`]."
    );
    let cuda_source = manaka_kernels::cuda::source(&shape);
    let allow = input
        .name
        .as_ref()
        .map(|_| quote!(#[allow(non_snake_case)]));
    // `nnue` shapes also get the integer engine: YaneuraOu's arithmetic on the same weights,
    // quantised at load (docs/nnue.md).
    let int_engine = shape.nnue.then(|| {
        quote! {
            /// The integer engine: YaneuraOu's NNUE arithmetic (int16 accumulators, int8
            /// weights, int32 sums) on this shape's weights, quantised at load (docs/nnue.md).
            pub type IntEngine = ::manaka::runtime::nnue::IntNet<#d, #in_, #h, #h2, #hl>;

            /// Opens an MNW1 file of this shape and builds the integer engine at the best
            /// integer level this CPU has (`MANAKA_SIMD` caps it).
            pub fn load_int(path: &::std::path::Path) -> ::std::result::Result<IntEngine, ::manaka::runtime::nnue::NnueError> {
                IntEngine::open(SHAPE, path)
            }

            /// Builds the integer engine on weights already in memory or mapped.
            pub fn int_from_source(
                source: ::std::sync::Arc<dyn ::manaka::runtime::weights::TensorSource + Send + Sync>,
            ) -> ::std::result::Result<IntEngine, ::manaka::runtime::nnue::NnueError> {
                IntEngine::new(SHAPE, source)
            }
        }
    });
    let int_factory = shape.nnue.then(|| {
        quote! {
            fn integer_factory(
                source: ::std::sync::Arc<dyn ::manaka::runtime::weights::TensorSource + Send + Sync>,
            ) -> ::std::option::Option<::std::result::Result<
                ::std::sync::Arc<dyn ::manaka::runtime::eval::EvaluatorFactory>,
                ::manaka::runtime::app::Error,
            >> {
                ::std::option::Option::Some(match int_from_source(source) {
                    ::std::result::Result::Ok(engine) => ::std::result::Result::Ok(::std::sync::Arc::new(
                        ::manaka::runtime::network::NetworkFactory(::std::sync::Arc::new(engine)),
                    )),
                    ::std::result::Result::Err(e) => ::std::result::Result::Err(e.into()),
                })
            }
        }
    });
    Ok(quote! {
        #[doc = #doc]
        #allow
        pub mod #module {
            /// The canonical shape name.
            pub const SHAPE: &str = #canonical;
            /// Token-space size `T`.
            pub const T: usize = #t;
            /// Embedding width.
            pub const D: usize = #d;
            /// Symmetric-polynomial order.
            pub const O: usize = #o;
            /// Power-sum groups (2 with `split`).
            pub const G: usize = #g;
            /// Pair-table width.
            pub const PAIR: usize = #p;
            /// Second-moment projection width (0: none).
            pub const M: usize = #m;
            /// Field channels per square (0: none).
            pub const F: usize = #f;
            /// One perspective's head input width.
            pub const INPUT_PER_PERSPECTIVE: usize = #inp;
            /// Head input width.
            pub const INPUT: usize = #in_;
            /// First hidden width.
            pub const H: usize = #h;
            /// Second hidden width (0: none).
            pub const H2: usize = #h2;
            /// Parameter count.
            pub const PARAMS: u64 = #params;
            /// The CUDA C source of this shape's kernels, every dimension a `#define`
            /// (`manaka_kernels::cuda::source`; docs/gpu.md). The CUDA evaluator compiles it
            /// with NVRTC for the device at first use.
            pub const CUDA_SOURCE: &str = #cuda_source;

            #[allow(unused_imports)]
            use ::manaka::runtime::compiled::{
                Affine, ClippedRelu, Dense, Field, HalfKp, Head, Kp, Manaka, Moments, Native, Net,
                NoField, NoMoments, NoPairs, Nnue, Pairs, Policy, Powers, Relu, Then, Value,
            };

            /// The engine as layer types: token space, accumulator, head (hidden layers,
            /// value, policy), every size a constant of this shape
            /// (`manaka_runtime::compiled`; docs/evaluator.md, "The engine as types").
            pub type Fixed = #fixed;

            #[doc = #engine_doc]
            pub struct Engine(Fixed);

            /// Both perspectives' accumulators (fixed-size arrays).
            pub type State = <Fixed as ::manaka::runtime::network::Network>::State;

            impl Engine {
                /// Attaches weights (`canonical` must be [`SHAPE`]) at the SIMD level detected
                /// on this CPU.
                pub fn new(
                    canonical: &str,
                    source: ::std::sync::Arc<dyn ::manaka::runtime::weights::TensorSource + Send + Sync>,
                ) -> ::std::result::Result<Engine, ::manaka::runtime::compiled::FixedNetError> {
                    Fixed::new(canonical, source).map(Engine)
                }

                /// Opens (memory-maps and verifies) an MNW1 file and attaches it.
                pub fn open(
                    canonical: &str,
                    path: &::std::path::Path,
                ) -> ::std::result::Result<Engine, ::manaka::runtime::compiled::FixedNetError> {
                    Fixed::open(canonical, path).map(Engine)
                }

                /// As [`Engine::new`] at an explicit SIMD level.
                pub fn with_simd(
                    canonical: &str,
                    source: ::std::sync::Arc<dyn ::manaka::runtime::weights::TensorSource + Send + Sync>,
                    simd: ::manaka::kernels::Simd,
                ) -> ::std::result::Result<Engine, ::manaka::runtime::compiled::FixedNetError> {
                    Fixed::with_simd(canonical, source, simd).map(Engine)
                }

                /// As [`Engine::with_simd`], with the hidden layers' weights at `precision`
                /// (bf16 or int8 copies made here; docs/evaluator.md, "Precision").
                pub fn with_precision(
                    canonical: &str,
                    source: ::std::sync::Arc<dyn ::manaka::runtime::weights::TensorSource + Send + Sync>,
                    simd: ::manaka::kernels::Simd,
                    precision: ::manaka::runtime::compiled::Precision,
                ) -> ::std::result::Result<Engine, ::manaka::runtime::compiled::FixedNetError> {
                    Fixed::with_precision(canonical, source, simd, precision).map(Engine)
                }

                /// The SIMD level the kernels run at.
                pub fn simd(&self) -> ::manaka::kernels::Simd {
                    self.0.simd()
                }

                /// The runtime's engine inside.
                pub fn fixed(&self) -> &Fixed {
                    &self.0
                }
            }

            impl ::std::fmt::Debug for Engine {
                fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    use ::manaka::runtime::network::Network as _;
                    write!(f, "Engine<{}>({})", SHAPE, self.0.describe())
                }
            }

            impl ::manaka::runtime::network::Network for Engine {
                type State = State;

                #[inline]
                fn shape(&self) -> &::manaka::shapes::Shape {
                    self.0.shape()
                }

                fn describe(&self) -> ::std::string::String {
                    self.0.describe()
                }

                #[inline]
                fn new_state(&self, pos: &::manaka::runtime::shogi::Position) -> State {
                    self.0.new_state(pos)
                }

                #[inline]
                fn refresh(&self, state: &mut State, pos: &::manaka::runtime::shogi::Position) {
                    self.0.refresh(state, pos)
                }

                #[inline]
                fn update(
                    &self,
                    state: &mut State,
                    effect: &::manaka::runtime::shogi::MoveEffect,
                    after: &::manaka::runtime::shogi::Position,
                ) {
                    self.0.update(state, effect, after)
                }

                #[inline]
                fn evaluate_batch(
                    &self,
                    batch: &[::manaka::runtime::network::StateLeaf<'_, State>],
                    out: &mut ::std::vec::Vec<::manaka::runtime::eval::Evaluation>,
                ) {
                    self.0.evaluate_batch(batch, out)
                }

                #[inline]
                fn evaluate(
                    &self,
                    state: &State,
                    leaf: ::manaka::runtime::eval::Leaf<'_>,
                ) -> ::manaka::runtime::eval::Evaluation {
                    self.0.evaluate(state, leaf)
                }
            }

            impl ::manaka::runtime::app::CompiledNetwork for Engine {
                const SHAPE: &'static str = SHAPE;

                fn from_source(
                    source: ::std::sync::Arc<dyn ::manaka::runtime::weights::TensorSource + Send + Sync>,
                ) -> ::std::result::Result<Engine, ::manaka::runtime::compiled::FixedNetError> {
                    Engine::new(SHAPE, source)
                }

                fn from_source_at(
                    source: ::std::sync::Arc<dyn ::manaka::runtime::weights::TensorSource + Send + Sync>,
                    precision: ::manaka::runtime::compiled::Precision,
                ) -> ::std::option::Option<::std::result::Result<Engine, ::manaka::runtime::compiled::FixedNetError>> {
                    ::std::option::Option::Some(Engine::with_precision(SHAPE, source, ::manaka::kernels::Simd::detect(), precision))
                }

                #int_factory
            }

            /// The shape, parsed.
            pub fn shape() -> ::manaka::shapes::Shape {
                ::manaka::shapes::Shape::parse(SHAPE).expect("checked at compile time")
            }

            /// Opens an MNW1 file of this shape (memory-mapped) and builds the engine with the
            /// SIMD level detected on this CPU (`MANAKA_SIMD` overrides).
            pub fn load(path: &::std::path::Path) -> ::std::result::Result<Engine, ::manaka::runtime::compiled::FixedNetError> {
                Engine::open(SHAPE, path)
            }

            /// Builds the engine on weights already in memory or mapped.
            pub fn from_source(
                source: ::std::sync::Arc<dyn ::manaka::runtime::weights::TensorSource + Send + Sync>,
            ) -> ::std::result::Result<Engine, ::manaka::runtime::compiled::FixedNetError> {
                Engine::new(SHAPE, source)
            }

            /// This engine as a program — a USI engine, a search, self-play, a benchmark —
            /// with its default weights still to choose
            /// ([`App`](::manaka::runtime::app::App); docs/library.md).
            pub fn app() -> ::manaka::runtime::app::App<Engine> {
                ::manaka::runtime::app::App::new()
            }

            #int_engine
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The composition as the compiler reads it, spaces normalised.
    fn composed(shape: &str) -> String {
        composition(&Shape::parse(shape).unwrap())
            .to_string()
            .replace(" < ", "<")
            .replace(" <", "<")
            .replace("< ", "<")
            .replace(" >", ">")
            .replace(" ,", ",")
    }

    /// Each shape's engine type, written out by hand from SPEC §2–6: the baseline (one hidden
    /// layer, pair table), the default network (KP, no pair table), an NNUE shape (clip, two
    /// layers) and one with every block, `ks` and `split`.
    #[test]
    fn compositions_read_as_the_architecture() {
        assert_eq!(
            composed("pair16_d128_o3_h512"),
            "Net<Native, Manaka<Powers<128, 3, 1>, Pairs<16, 0>, NoMoments, NoField, false, 400, 800>, \
             Head<Dense<Affine<800, 512>, Relu>, Value<512>, Policy<512, 0>>>"
        );
        assert_eq!(
            composed("pair0_d128_o2_h256_kp"),
            "Net<Kp, Manaka<Powers<128, 2, 1>, NoPairs, NoMoments, NoField, false, 256, 512>, \
             Head<Dense<Affine<512, 256>, Relu>, Value<256>, Policy<256, 0>>>"
        );
        assert_eq!(
            composed("pair0_d256_o1_h32_h232_halfkp_nnue"),
            "Net<HalfKp, Nnue<256, 512>, Head<Then<Dense<Affine<512, 32>, ClippedRelu>, \
             Dense<Affine<32, 32>, ClippedRelu>>, Value<32>, Policy<32, 0>>>"
        );
        // Powers: 2 groups × 3 orders × 4 = 24; pair 1 + lse 1; moments 6; field 162;
        // ks one per normalised block (6 + 2 + 1 + 1 = 10): INP = 204.
        assert_eq!(
            composed("pair2_d4_o3_h8_h24_m3_f2_lse1_ks_split"),
            "Net<Native, Manaka<Powers<4, 3, 2>, Pairs<2, 1>, Moments<3, 6>, Field<2, 162>, true, 204, 408>, \
             Head<Then<Dense<Affine<408, 8>, Relu>, Dense<Affine<8, 4>, Relu>>, Value<4>, Policy<4, 2>>>"
        );
    }
}
