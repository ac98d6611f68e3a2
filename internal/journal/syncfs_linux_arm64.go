//go:build linux && arm64

package journal

// sysSyncfs is syncfs(2) on linux/arm64 (the syscall package lacks it).
const sysSyncfs = 267
