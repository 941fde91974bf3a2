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
//! engine type (`Engine`, the runtime's `FixedNet` instantiated with those constants), its
//! accumulator type (`State`), loaders, and the CUDA source specialised for the shape.

use manaka_shapes::Shape;
use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
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
    let u = |v: u64| v as usize;
    let d = u(shape.d.into());
    let o = u(shape.order.into());
    let g: usize = if shape.split { 2 } else { 1 };
    let p = u(shape.pair.into());
    let m = u(shape.moments.unwrap_or(0).into());
    let mt = m * (m + 1) / 2;
    let f = u(shape.field.unwrap_or(0).into());
    let ff = 81 * f;
    let inp = u(shape.perspective_width());
    let in_ = u(shape.input_width());
    let h = u(shape.h.into());
    let h2 = u(shape.h2.unwrap_or(0).into());
    let hl = u(shape.last_hidden());
    let t = u(shape.token_count());
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

            /// The engine: every dimension above is a constant of its type.
            pub type Engine = ::manaka::runtime::fixed::FixedNet<#d, #o, #g, #p, #mt, #ff, #inp, #in_, #h, #h2, #hl>;
            /// Both perspectives' accumulators (fixed-size arrays).
            pub type State = <Engine as ::manaka::runtime::network::Network>::State;

            /// The shape, parsed.
            pub fn shape() -> ::manaka::shapes::Shape {
                ::manaka::shapes::Shape::parse(SHAPE).expect("checked at compile time")
            }

            /// Opens an MNW1 file of this shape (memory-mapped) and builds the engine with the
            /// SIMD level detected on this CPU (`MANAKA_SIMD` overrides).
            pub fn load(path: &::std::path::Path) -> ::std::result::Result<Engine, ::manaka::runtime::fixed::FixedNetError> {
                Engine::open(SHAPE, path)
            }

            /// Builds the engine on weights already in memory or mapped.
            pub fn from_source(
                source: ::std::sync::Arc<dyn ::manaka::runtime::weights::TensorSource + Send + Sync>,
            ) -> ::std::result::Result<Engine, ::manaka::runtime::fixed::FixedNetError> {
                Engine::new(SHAPE, source)
            }

            #int_engine
        }
    })
}
