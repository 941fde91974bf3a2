// ShapeError::Repeated: each token may appear once.
manaka::manaka_net!("pair16_d128_d64_o3_h512");

fn main() {}
