// ShapeError::Unknown with a suggestion: tokens are lower case.
manaka::manaka_net!("Pair16_d128_o3_h512");

fn main() {}
