// ShapeError::Unknown without a suggestion: a stray word lists the tokens of the grammar.
manaka::manaka_net!("pair16_d128_o3_h512_wide");

fn main() {}
