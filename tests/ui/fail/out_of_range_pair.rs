// ShapeError::OutOfRange: `pairN` allows 0..=64.
manaka::manaka_net!("pair65_d128_o3_h512");

fn main() {}
