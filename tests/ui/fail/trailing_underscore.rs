// ShapeError::EmptyToken: a trailing `_` leaves an empty last token.
manaka::manaka_net!("pair16_d128_o3_h512_");

fn main() {}
