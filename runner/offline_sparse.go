package runner

import "github.com/dreamkit/dream"

// WritesChangesOnly implements dream.SparseWriter: the offline engine reads
// the memory where it is (Job.BaseDir) and writes only the files a run
// changes, whole, into the empty staging (offline.Options.WriteDir); it
// never deletes one. A one-line hand edit then makes a dream that stages,
// compares and commits one file, not the memory.
func (*Offline) WritesChangesOnly() bool { return true }

// engineDirs are the offline engine's read and write dirs for a job: a
// sparse job is read from its base and written to its staging; any other
// job's staging is a full view, edited in place.
func engineDirs(job dream.Job) (read, write string) {
	if job.BaseDir != "" {
		return job.BaseDir, job.MemoryDir
	}
	return job.MemoryDir, ""
}

func engineReadDir(job dream.Job) string  { r, _ := engineDirs(job); return r }
func engineWriteDir(job dream.Job) string { _, w := engineDirs(job); return w }
