module github.com/roce-dissect/roce-dissect

go 1.26

require (
	github.com/fatih/color v1.19.0 // indirect
	github.com/gopacket/gopacket v1.7.7 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/net v0.55.0 // indirect
	golang.org/x/sys v0.45.0 // indirect
)
