// ShapeError::Unknown with a suggestion: `hlafkp` is one transposition from `halfkp`.
manaka::manaka_net!("pair0_d128_o3_h512_hlafkp");

fn main() {}
