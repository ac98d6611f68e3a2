//go:build linux && amd64

package journal

// sysSyncfs is syncfs(2) on linux/amd64 (the syscall package lacks it).
const sysSyncfs = 306
