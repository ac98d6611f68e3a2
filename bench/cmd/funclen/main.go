// Command funclen prints the length in lines of every function and method
// of the Go files it is given (or of every non-test file of the packages in
// the directories it is given), longest first, and exits 1 when one is
// longer than -max. It measures with go/ast from the opening line of the
// declaration (its doc comment excluded) to the closing brace, so that a
// review can hold the root package to short, named steps.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type fn struct {
	file, name string
	lines      int
}

func main() {
	max := flag.Int("max", 60, "longest function allowed, in lines")
	tests := flag.Bool("tests", false, "measure _test.go files too")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: funclen [-max N] [-tests] FILE.go|DIR ...")
		os.Exit(2)
	}
	var files []string
	for _, arg := range flag.Args() {
		fi, err := os.Stat(arg)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if !fi.IsDir() {
			files = append(files, arg)
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(arg, "*.go"))
		for _, m := range matches {
			if *tests || !strings.HasSuffix(m, "_test.go") {
				files = append(files, m)
			}
		}
	}
	fns, err := measure(files)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	over := 0
	for _, f := range fns {
		mark := ""
		if f.lines > *max {
			mark, over = "  > max", over+1
		}
		fmt.Printf("%4d  %s  %s%s\n", f.lines, f.file, f.name, mark)
	}
	if over > 0 {
		fmt.Printf("%d function(s) over %d lines\n", over, *max)
		os.Exit(1)
	}
}

func measure(files []string) ([]fn, error) {
	fset := token.NewFileSet()
	var out []fn
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) > 0 {
				name = "(" + recvType(fd.Recv.List[0].Type) + ")." + name
			}
			start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
			out = append(out, fn{file: filepath.Base(path), name: name, lines: end - start + 1})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].lines > out[j].lines })
	return out, nil
}

func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return "*" + recvType(t.X)
	case *ast.Ident:
		return t.Name
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	}
	return "?"
}
