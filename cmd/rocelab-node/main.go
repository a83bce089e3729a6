package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/rocelab/rocelab/lab/emulation/node"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Println("usage")
		return
	}
	cfg, err := node.Load(os.Args[2])
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	_ = node.Main(context.Background(), cfg, slog.Default())
}
