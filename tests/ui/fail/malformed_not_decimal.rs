// ShapeError::MalformedNumber: `h5x` is not a decimal number.
manaka::manaka_net!("pair16_d128_o3_h5x");

fn main() {}
