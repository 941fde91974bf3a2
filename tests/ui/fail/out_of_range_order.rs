// ShapeError::OutOfRange: `oN` allows 1..=8.
manaka::manaka_net!("pair16_d128_o9_h512");

fn main() {}
