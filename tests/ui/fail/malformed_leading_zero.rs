// ShapeError::MalformedNumber with a suggestion: `d0128` has a leading zero.
manaka::manaka_net!("pair16_d0128_o3_h512");

fn main() {}
