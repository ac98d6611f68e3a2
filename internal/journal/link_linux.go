package journal

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Installing by hard link.
//
// A staged file the commit installs is, on the memory's own file system,
// not copied: it is hard-linked under a temporary name into its target's
// directory and renamed over the target. Its data was already made durable
// by syncStaged, so the commit creates no inode, copies no byte and syncs
// no file a second time; the directory syncs stay.
//
// The hazard is that the staged file and the memory file are then one
// inode: a runner that goes on writing into staging after it returned
// would write into the memory. Three facts close it, per file, in order:
//
//  1. The inode is still the version the scan hashed: same inode, size,
//     mtime and ctime as when it was read (ctime cannot be set back from
//     user space), and it has no other name (link count 1).
//  2. No one has it open for writing, and no one can open it for writing
//     while it is renamed out of staging: a read lease (fcntl F_SETLEASE)
//     is refused while any descriptor or shared mapping can write the
//     inode, and while it is held any open for writing waits and breaks
//     it.
//  3. Under the lease the staged name is removed right after the link, so
//     from then on the staging path no longer leads to the memory; a lease
//     found broken afterwards means a writer opened it meanwhile (and
//     writes once the lease goes): the file goes back to staging, out of
//     the memory, and the commit refuses.
//
// What is left is a writer of the memory dir itself (its temporary name,
// or the memory file once renamed): that is an edit of the memory, which
// the commit's checks and the next dream's record of hand edits treat as
// any other.
//
// A file for which 1 fails, or that is found open for writing, makes the
// commit refuse with ErrStagingChanged before anything is renamed: what
// would land is no longer what the guards checked. A file system that
// refuses links or leases (another device, EPERM, EMLINK, a FUSE or network
// mount) falls back to the copy, which is checked against the same stat.
//
// Crash safety: between the link and the rename the file's only names are
// the staged one and then the temporary one, named after the transaction
// and the path (linkTempName), so a roll-forward that finds the staged
// file gone renames the temporary one, after checking its content hash
// (Recover keeps such temporaries while their transaction is pending). On
// a journaling file system the unlink of the staged name is durable only
// with the link made before it.

// linkat is unix.Linkat; a variable only so that tests can make a file
// system refuse links (EXDEV) or run out of space (ENOSPC).
var linkat = unix.Linkat

// linkInstalls is whether commits try links at all; tests turn it off to
// cover the copy.
var linkInstalls = true

// linker installs a live commit's staged files by hard link.
type linker struct {
	root   *os.Root // the memory dir
	stage  *os.Root // the staging dir
	id     string
	frozen map[string]fingerprint // each staged file's stat when it was hashed
	off    bool                   // links or leases are refused here: copy from now on
	// mu guards the directory caches: a commit renames into several
	// directories at once (renameInstalls).
	mu    sync.Mutex
	mdirs map[string]*os.File
	sdirs map[string]*os.File
	// replaced, when not empty, is where rename keeps the files it
	// replaces (see keepReplaced); keptDirs are its subdirectories, opened
	// as they are first used, and kept counts the files kept.
	replaced string
	keptDirs [replacedDirs]*os.File
	kept     int
}

func newLinker(root *os.Root, stageDir, id string, frozen map[string]fingerprint, replaced string) *linker {
	if !linkInstalls || frozen == nil {
		return nil
	}
	stage, err := os.OpenRoot(stageDir)
	if err != nil {
		return nil
	}
	return &linker{root: root, stage: stage, id: id, frozen: frozen, mdirs: map[string]*os.File{}, sdirs: map[string]*os.File{}, replaced: replaced}
}

func (l *linker) close() {
	if l == nil {
		return
	}
	for _, f := range l.mdirs {
		f.Close()
	}
	for _, f := range l.sdirs {
		f.Close()
	}
	for _, f := range l.keptDirs {
		if f != nil {
			f.Close()
		}
	}
	l.stage.Close()
}

func openDir(r *os.Root, cache map[string]*os.File, dir string) (*os.File, error) {
	if f, ok := cache[dir]; ok {
		return f, nil
	}
	f, err := r.Open(dir)
	if err != nil {
		return nil, err
	}
	cache[dir] = f
	return f, nil
}

func frozenStat(st *unix.Stat_t) fingerprint {
	return fingerprint{Size: st.Size, Ino: st.Ino, MtimeNs: st.Mtim.Nano(), CtimeNs: st.Ctim.Nano()}
}

// install links rel's staged file to a temporary name beside rel in the
// memory dir, with mode perm, and removes its staged name. ok is false (and
// err nil) when the copy must do it instead; err is a reason to change
// nothing.
func (l *linker) install(rel string, perm fs.FileMode, n int) (tmp string, ok bool, err error) {
	if l == nil || l.off {
		return "", false, nil
	}
	want, known := l.frozen[filepath.ToSlash(rel)]
	if !known || want.Ino == 0 {
		return "", false, nil
	}
	dir, name := filepath.Dir(rel), filepath.Base(rel)
	sdir, err := openDir(l.stage, l.sdirs, dir)
	if err != nil {
		return "", false, nil // the copy reports what is wrong
	}
	// O_NONBLOCK: a FIFO put at the staged path must not hang the commit.
	fd, err := unix.Openat(int(sdir.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", false, nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", false, nil
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || !frozenStat(&st).sameStat(want) {
		return "", false, fmt.Errorf("install %s: %w: written after it was checked", rel, ErrStagingChanged)
	}
	if st.Nlink != 1 {
		return "", false, nil // another name could write it later: copy
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK); err != nil {
		if errors.Is(err, unix.EAGAIN) {
			return "", false, fmt.Errorf("install %s: %w: still open for writing", rel, ErrStagingChanged)
		}
		l.off = true // no leases on this file system
		return "", false, nil
	}
	defer unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_UNLCK)
	if err := l.root.MkdirAll(dir, 0o755); err != nil {
		return "", false, fmt.Errorf("install %s: %w", rel, err)
	}
	mdir, err := openDir(l.root, l.mdirs, dir)
	if err != nil {
		return "", false, fmt.Errorf("install %s: %w", rel, err)
	}
	tmpName := linkTempName(l.id, rel)
	// Flags 0: a symlink at the staged name would be linked itself, never
	// followed (and is caught by the inode check below); both names are
	// single elements under directories the two os.Roots opened, so no
	// link in the memory dir can redirect the new name.
	err = linkat(int(sdir.Fd()), name, int(mdir.Fd()), tmpName, 0)
	if errors.Is(err, unix.EEXIST) { // left by an interrupted attempt
		unix.Unlinkat(int(mdir.Fd()), tmpName, 0)
		err = linkat(int(sdir.Fd()), name, int(mdir.Fd()), tmpName, 0)
	}
	switch {
	case err == nil:
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT):
		return "", false, fmt.Errorf("install %s: %w", rel, &os.LinkError{Op: "link", Old: rel, New: tmpName, Err: err})
	default:
		// EXDEV (the state dir is on another device), EPERM, EMLINK,
		// EOPNOTSUPP: this file system will not link; copy.
		l.off = true
		return "", false, nil
	}
	undo := func() { unix.Unlinkat(int(mdir.Fd()), tmpName, 0) }
	// The name linked must be the inode leased: something renamed over
	// the staged name between the open and the link would link another.
	var lt unix.Stat_t
	if err := unix.Fstatat(int(mdir.Fd()), tmpName, &lt, unix.AT_SYMLINK_NOFOLLOW); err != nil || lt.Ino != st.Ino || lt.Dev != st.Dev {
		undo()
		return "", false, fmt.Errorf("install %s: %w: replaced while it was installed", rel, ErrStagingChanged)
	}
	if uint32(perm.Perm()) != st.Mode&0o777 {
		if err := unix.Fchmod(fd, uint32(perm.Perm())); err != nil {
			undo()
			return "", false, fmt.Errorf("install %s: %w", rel, err)
		}
	}
	crashPoint("commit:link:%d", n)
	if err := unix.Unlinkat(int(sdir.Fd()), name, 0); err != nil {
		undo()
		return "", false, fmt.Errorf("install %s: %w", rel, err)
	}
	if lease, err := unix.FcntlInt(uintptr(fd), unix.F_GETLEASE, 0); err != nil || lease != unix.F_RDLCK {
		// A writer opened the inode while the lease was held: it writes
		// once the lease goes. The file goes back to staging.
		l.restore(rel, filepath.Join(dir, tmpName))
		return "", false, fmt.Errorf("install %s: %w: opened for writing while it was installed", rel, ErrStagingChanged)
	}
	return filepath.Join(dir, tmpName), true, nil
}

// rename moves a linked temporary file over its target, through the
// directory the link was made in (no path is resolved again: both are
// names in one directory the os.Root opened).
//
// The file it replaces is kept, when the commit keeps them, as a second
// name in the replaced dir (keepReplaced): the rename frees nothing. Else
// it is held open (O_PATH) across the rename, and release closes it:
// freeing a replaced file (its blocks, and with discard a wait for the
// device) then happens in whoever calls release, not under the
// directory's lock, where it made every rename in a flat memory dir wait
// for the one before (in a profile of a 30,000-topic dream on ext4 with
// discard, most of each rename's time: ext4_free_blocks waiting in
// blkdev_issue_discard).
func (l *linker) rename(tmp, rel string) (release func(), err error) {
	l.mu.Lock()
	mdir, err := openDir(l.root, l.mdirs, filepath.Dir(rel))
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	dirFD, name := int(mdir.Fd()), filepath.Base(rel)
	if l.keepReplaced(dirFD, name) {
		if err := unix.Renameat(dirFD, filepath.Base(tmp), dirFD, name); err != nil {
			return nil, &os.LinkError{Op: "rename", Old: tmp, New: rel, Err: err}
		}
		return nil, nil
	}
	held, herr := unix.Openat(dirFD, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err := unix.Renameat(dirFD, filepath.Base(tmp), dirFD, name); err != nil {
		if herr == nil {
			unix.Close(held)
		}
		return nil, &os.LinkError{Op: "rename", Old: tmp, New: rel, Err: err}
	}
	if herr != nil {
		return nil, nil // nothing was there to replace (or it could not be held)
	}
	return func() { unix.Close(held) }, nil
}

// keepReplaced links the file name in the directory dirFD (the one a
// rename is about to replace) into the replaced dir, and reports whether
// it did: the rename then frees nothing, and the files are freed when the
// caller removes that dir, after the commit (see CommitOptions). A name
// that cannot be linked there (nothing there, a directory, a file system
// that refuses, a number a retried commit already used) is left to
// rename's own way. Between the link and the rename, and after a commit
// abandoned before any rename (which drops the links), the memory file
// has that second name in the state dir.
func (l *linker) keepReplaced(dirFD int, name string) bool {
	if l.replaced == "" {
		return false
	}
	l.mu.Lock()
	n := l.kept
	l.kept++
	sub := n % replacedDirs
	dir := l.keptDirs[sub]
	if dir == nil {
		p := filepath.Join(l.replaced, strconv.Itoa(sub))
		if err := os.MkdirAll(p, 0o700); err == nil {
			dir, _ = os.Open(p)
			l.keptDirs[sub] = dir
		}
	}
	l.mu.Unlock()
	if dir == nil {
		return false
	}
	// Flags 0: a link, never followed, of the name itself.
	return linkat(dirFD, name, int(dir.Fd()), strconv.Itoa(n), 0) == nil
}

// restore gives a linked temporary file back its staged name and removes
// it from the memory dir: the commit is abandoned, and the staging must
// still hold everything. A failure leaves the temporary file, which a
// roll-forward can use and Recover otherwise removes.
func (l *linker) restore(rel, tmp string) error {
	dir, name := filepath.Dir(rel), filepath.Base(rel)
	sdir, err := openDir(l.stage, l.sdirs, dir)
	if err != nil {
		return err
	}
	mdir, err := openDir(l.root, l.mdirs, dir)
	if err != nil {
		return err
	}
	tmpName := filepath.Base(tmp)
	err = linkat(int(mdir.Fd()), tmpName, int(sdir.Fd()), name, 0)
	if errors.Is(err, unix.EEXIST) {
		// Something wrote a new staged file after the freeze; the one
		// checked wins.
		if err = unix.Unlinkat(int(sdir.Fd()), name, 0); err == nil {
			err = linkat(int(mdir.Fd()), tmpName, int(sdir.Fd()), name, 0)
		}
	}
	if err != nil {
		return fmt.Errorf("restore staged %s: %w", rel, err)
	}
	return unix.Unlinkat(int(mdir.Fd()), tmpName, 0)
}
