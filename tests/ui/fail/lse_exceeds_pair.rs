// ShapeError::LseExceedsPair: `lseN` reads the last N of the pair channels.
manaka::manaka_net!("pair4_d16_o2_h32_lse8");

fn main() {}
