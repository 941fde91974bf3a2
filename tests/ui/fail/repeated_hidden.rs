// ShapeError::Repeated for `hN`: the message says a second layer is written `h2N`.
manaka::manaka_net!("pair16_d128_o3_h512_h128");

fn main() {}
