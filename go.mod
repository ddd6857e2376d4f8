module github.com/offcc/offcc

go 1.26.8
