//! A warp's `.local` pages are freed when the warp exits, not when its CTA does (issue
//! 26): a CTA whose warps finish at different times holds only the live warps' pages.

use crate::memory::local::LocalMemory;
use crate::{Emulator, LaunchConfig, WarpStatus};

/// 64 threads: each writes one word of its 8 KiB frame; warp 1 then writes a second page
/// and warp 0 exits first.
const KERNEL: &str = ".version 7.0\n.target sm_70\n.address_size 64\n\
    .visible .entry k()\n{\n.local .align 4 .b8 buf[8192];\n\
    .reg .pred %p<2>;\n.reg .b32 %r<4>;\n\
    mov.u32 %r1, %tid.x;\n\
    st.local.u32 [buf+4096], %r1;\n\
    setp.lt.u32 %p1, %r1, 32;\n\
    @%p1 bra DONE;\n\
    st.local.u32 [buf], %r1;\n\
    DONE:\n\
    ret;\n}\n";

fn bytes(local: &[LocalMemory]) -> u64 {
    local.iter().map(LocalMemory::allocated_bytes).sum()
}

#[test]
fn a_warps_local_pages_go_when_it_exits_not_with_its_cta() {
    let mut emu = Emulator::new();
    let m = emu.load_ptx("k.ptx", KERNEL).unwrap();
    let k = emu.kernel(m, "k").unwrap();
    let mut launch = emu.launch(k, LaunchConfig::linear(1, 64), &[]).unwrap();
    let mut cta = launch.start_cta(0).unwrap();
    // Both warps write their first page.
    for w in 0..2 {
        launch.execute(&mut cta, w).unwrap();
        launch.execute(&mut cta, w).unwrap();
        assert_eq!(bytes(&cta.warps[w].local), 32 * 4096, "warp {w}");
    }
    // Warp 0 runs to its exit; warp 1, still live, keeps its page.
    while cta.warps[0].status != WarpStatus::Exited {
        launch.execute(&mut cta, 0).unwrap();
    }
    assert!(cta.warps[0].local.is_empty());
    assert_eq!(bytes(&cta.warps[1].local), 32 * 4096);
    // Warp 1 writes its second page, then exits: nothing is left.
    let mut most = 0;
    while cta.warps[1].status != WarpStatus::Exited {
        launch.execute(&mut cta, 1).unwrap();
        most = most.max(bytes(&cta.warps[1].local));
    }
    assert_eq!(most, 32 * 2 * 4096);
    assert!(cta.warps[1].local.is_empty());
    assert!(cta.is_done());
}
