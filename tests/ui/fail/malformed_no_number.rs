// ShapeError::MalformedNumber: `d` without its number.
manaka::manaka_net!("pair16_d_o3_h512");

fn main() {}
