//! Typed dense indices for the IR's entities (Cranelift style): blocks, instructions and
//! virtual registers live in vectors and are named by these, never by pointers.

use std::fmt;

macro_rules! entity {
    ($(#[$meta:meta])* $name:ident, $prefix:literal) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub u32);

        impl $name {
            #[inline]
            pub fn new(index: usize) -> Self {
                debug_assert!(index <= u32::MAX as usize);
                $name(index as u32)
            }
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

entity!(
    /// A basic block of one function.
    BlockId,
    "bb"
);
entity!(
    /// An instruction of one function, numbered in layout order.
    InstId,
    "i"
);
entity!(
    /// A virtual register of one function (PTX registers are virtual and unlimited).
    /// Vector registers (`.reg .v4 .f32 %v`) are split into one virtual register per lane.
    RegId,
    "v"
);
entity!(
    /// A function of one program (kernel entry or device function), in module order.
    FuncId,
    "fn"
);
entity!(
    /// A module-scope variable of one program (`.global`, `.const`, `.shared`, texture refs).
    VarId,
    "g"
);
entity!(
    /// A variable declared inside one function body, in any state space (`.local`,
    /// `.shared`, `.param` call buffers), after scope resolution: two declarations of the
    /// same name in different `{}` scopes get different ids.
    LocalVarId,
    "l"
);
