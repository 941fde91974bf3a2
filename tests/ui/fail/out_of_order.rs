// ShapeError::OutOfOrder: the suggestion is the whole canonical name.
manaka::manaka_net!("d128_pair16_o3_h512");

fn main() {}
