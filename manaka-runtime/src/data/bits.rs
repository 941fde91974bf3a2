//! The bit stream both 256-bit position packings use: bits are written and read
//! least-significant first, byte 0 first (Apery's `BitStream`, YaneuraOu's `BitStream`: bit
//! `i` of the stream is bit `i % 8` of byte `i / 8`).

/// Writes codes into a fixed 32-byte buffer; refuses to run past its end.
pub(crate) struct BitWriter {
    data: [u8; 32],
    cursor: usize,
}

impl BitWriter {
    pub fn new() -> BitWriter {
        BitWriter {
            data: [0; 32],
            cursor: 0,
        }
    }

    /// Appends the low `len` bits of `code`, lowest first. `false` (and nothing written)
    /// if they would not fit in 256 bits.
    pub fn put(&mut self, code: u32, len: u32) -> bool {
        if self.cursor + len as usize > 256 {
            return false;
        }
        for i in 0..len {
            if code >> i & 1 != 0 {
                self.data[self.cursor / 8] |= 1 << (self.cursor % 8);
            }
            self.cursor += 1;
        }
        true
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn finish(self) -> [u8; 32] {
        self.data
    }
}

/// Reads bits from a 32-byte buffer; reading past the end yields `None`.
pub(crate) struct BitReader<'a> {
    data: &'a [u8; 32],
    cursor: usize,
}

impl<'a> BitReader<'a> {
    pub fn new(data: &'a [u8; 32]) -> BitReader<'a> {
        BitReader { data, cursor: 0 }
    }

    pub fn bit(&mut self) -> Option<u32> {
        if self.cursor >= 256 {
            return None;
        }
        let b = (self.data[self.cursor / 8] >> (self.cursor % 8)) & 1;
        self.cursor += 1;
        Some(u32::from(b))
    }

    /// Reads `len` bits, the first read being the lowest.
    pub fn bits(&mut self, len: u32) -> Option<u32> {
        let mut v = 0;
        for i in 0..len {
            v |= self.bit()? << i;
        }
        Some(v)
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsb_first_within_each_byte() {
        let mut w = BitWriter::new();
        assert!(w.put(1, 1));
        assert!(w.put(0b0101100, 7)); // 44 = 5i
        let d = w.finish();
        // Bit 0 = 1 and bits 1..7 = 44: 1 + 88 = 89, the first byte of an HCP with White
        // to move and Black's king on 5i (cshogi's own test vector starts with 89).
        assert_eq!(d[0], 89);
        let mut r = BitReader::new(&d);
        assert_eq!(r.bit(), Some(1));
        assert_eq!(r.bits(7), Some(44));
    }

    #[test]
    fn refuses_to_overrun() {
        let mut w = BitWriter::new();
        for _ in 0..32 {
            assert!(w.put(0xff, 8));
        }
        assert!(!w.put(1, 1));
        let d = [0u8; 32];
        let mut r = BitReader::new(&d);
        for _ in 0..32 {
            assert_eq!(r.bits(8), Some(0));
        }
        assert_eq!(r.bit(), None);
        assert_eq!(r.cursor(), 256);
    }
}
