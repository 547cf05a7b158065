//! The [`Device`] the library runs on: the emulator's global-memory allocation table
//! (`emu::memory::GlobalMemory`, identity-mapped), so every pointer the program gets is
//! already in the table kernels will access. Kernel execution joins here when the
//! emulator's module loading and launch interface land; until then a launch reports that
//! it is unavailable.

use std::collections::HashMap;

use emu::memory::{AllocKind as EmuAllocKind, GlobalMemory};

use crate::device::{AllocKind, Device, DeviceError, KernelStats, Launch, ModuleId};

#[derive(Debug, Default)]
pub struct EmuDevice {
    memory: GlobalMemory,
    modules: Vec<String>,
    symbols: HashMap<(ModuleId, String), u64>,
}

impl EmuDevice {
    pub fn new() -> EmuDevice {
        EmuDevice::default()
    }
}

impl Device for EmuDevice {
    fn malloc(&mut self, size: usize, kind: AllocKind) -> Result<u64, DeviceError> {
        let kind = match kind {
            AllocKind::Device => EmuAllocKind::Device,
            AllocKind::PinnedHost => EmuAllocKind::Host,
            AllocKind::Managed => EmuAllocKind::Managed,
        };
        self.memory
            .alloc(size as u64, kind)
            .map_err(|_| DeviceError::OutOfMemory(size))
    }

    fn free(&mut self, ptr: u64) -> Result<(), DeviceError> {
        self.memory
            .free(ptr)
            .map_err(|_| DeviceError::NotAllocated(ptr))
    }

    fn check_range(&self, ptr: u64, len: usize) -> Result<(), DeviceError> {
        let (base, size) = self
            .memory
            .allocation_of(ptr)
            .ok_or(DeviceError::OutOfBounds { ptr, len })?;
        if ptr.saturating_add(len as u64) <= base.saturating_add(size) {
            Ok(())
        } else {
            Err(DeviceError::OutOfBounds { ptr, len })
        }
    }

    fn load_module(&mut self, ptx: &str) -> Result<ModuleId, DeviceError> {
        let id = u32::try_from(self.modules.len())
            .map_err(|_| DeviceError::BadModule("too many modules".into()))?;
        self.modules.push(ptx.to_string());
        Ok(ModuleId(id))
    }

    fn symbol_address(
        &mut self,
        module: ModuleId,
        name: &str,
        size: usize,
    ) -> Result<u64, DeviceError> {
        if let Some(&addr) = self.symbols.get(&(module, name.to_string())) {
            return Ok(addr);
        }
        let addr = self
            .memory
            .alloc(size as u64, EmuAllocKind::GlobalVariable)
            .map_err(|_| DeviceError::OutOfMemory(size))?;
        self.symbols.insert((module, name.to_string()), addr);
        Ok(addr)
    }

    fn launch(&mut self, _launch: &Launch<'_>) -> Result<KernelStats, DeviceError> {
        Err(DeviceError::Unavailable(
            "kernel execution (the functional emulator)",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_live_in_the_emulator_table() {
        let mut dev = EmuDevice::new();
        let a = dev.malloc(100, AllocKind::Managed).unwrap();
        assert!(dev.check_range(a, 100).is_ok());
        assert!(dev.check_range(a + 1, 100).is_err());
        assert!(dev.check_range(a + 100, 1).is_err());
        let s = dev.symbol_address(ModuleId(0), "table", 64).unwrap();
        assert_eq!(dev.symbol_address(ModuleId(0), "table", 64).unwrap(), s);
        assert!(dev.check_range(s, 64).is_ok());
        dev.free(a).unwrap();
        assert_eq!(dev.free(a), Err(DeviceError::NotAllocated(a)));
    }
}
