// ShapeError::Missing: `oN` is one of the four required tokens.
manaka::manaka_net!("pair16_d128_h512");

fn main() {}
