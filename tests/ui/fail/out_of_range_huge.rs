// ShapeError::OutOfRange: a number past u32 saturates instead of overflowing.
manaka::manaka_net!("pair16_d99999999999999999999_o3_h512");

fn main() {}
