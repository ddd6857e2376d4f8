module offcc.example/cgo

go 1.22
