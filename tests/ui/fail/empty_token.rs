// ShapeError::EmptyToken: two `_` in a row.
manaka::manaka_net!("pair16__d128_o3_h512");

fn main() {}
