// ShapeError::Empty: the empty string is no shape.
manaka::manaka_net!("");

fn main() {}
