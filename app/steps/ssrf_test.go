package steps

import (
	"errors"
	"net/netip"
	"testing"
)

func TestGuardCheck(t *testing.T) {
	t.Parallel()
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.20.0.0/16")}
	tests := []struct {
		addr   string
		allow  []netip.Prefix
		reason string // "" means allowed
	}{
		{addr: "8.8.8.8"},
		{addr: "1.1.1.1"},
		{addr: "2606:4700:4700::1111"},
		{addr: "172.32.0.1"},
		{addr: "100.128.0.1"},
		{addr: "0.0.0.0", reason: "unspecified"},
		{addr: "0.1.2.3", reason: "this-network"},
		{addr: "10.0.0.1", reason: "private"},
		{addr: "10.255.255.255", reason: "private"},
		{addr: "100.64.0.1", reason: "shared (CGNAT)"},
		{addr: "100.127.255.254", reason: "shared (CGNAT)"},
		{addr: "127.0.0.1", reason: "loopback"},
		{addr: "127.8.9.10", reason: "loopback"},
		{addr: "169.254.169.254", reason: "cloud metadata"},
		{addr: "169.254.1.1", reason: "link-local"},
		{addr: "172.16.0.1", reason: "private"},
		{addr: "172.31.255.255", reason: "private"},
		{addr: "192.0.0.8", reason: "IETF protocol assignment"},
		{addr: "192.0.2.1", reason: "documentation"},
		{addr: "192.168.1.1", reason: "private"},
		{addr: "198.18.0.1", reason: "benchmarking"},
		{addr: "224.0.0.1", reason: "multicast"},
		{addr: "239.255.255.250", reason: "multicast"},
		{addr: "240.0.0.1", reason: "reserved"},
		{addr: "255.255.255.255", reason: "reserved"},
		{addr: "::", reason: "unspecified"},
		{addr: "::1", reason: "loopback"},
		{addr: "::7f00:1", reason: "IPv4-compatible (deprecated)"},
		{addr: "::ffff:127.0.0.1", reason: "loopback"},
		{addr: "::ffff:10.1.2.3", reason: "private"},
		{addr: "::ffff:169.254.169.254", reason: "cloud metadata"},
		{addr: "::ffff:8.8.8.8"},
		{addr: "64:ff9b::7f00:1", reason: "NAT64 loopback"},
		{addr: "64:ff9b::a9fe:a9fe", reason: "NAT64 cloud metadata"},
		{addr: "64:ff9b::808:808"},
		{addr: "64:ff9b:1::1", reason: "local-use NAT64"},
		{addr: "::ffff:0:7f00:1", reason: "IPv4-translated"},
		{addr: "::ffff:0:808:808", reason: "IPv4-translated"},
		{addr: "::ffff:0:0:0", reason: "IPv4-translated"},
		{addr: "::ffff:1:0:1", reason: "reserved"},
		{addr: "400::1", reason: "reserved"},
		{addr: "e000::1", reason: "reserved"},
		{addr: "2a00:1450:4001::1"},
		{addr: "64:ff9b::a00:1", reason: "NAT64 private"},
		{addr: "64:ff9b::6440:1", reason: "NAT64 shared (CGNAT)"},
		{addr: "64:ff9b:1:2::1", reason: "local-use NAT64"},
		{addr: "::ffff:100.64.0.1", reason: "shared (CGNAT)"},
		{addr: "::ffff:198.19.255.255", reason: "benchmarking"},
		{addr: "2002:a00:1::1", reason: "6to4"},
		{addr: "2002:808:808::1", reason: "6to4"},
		{addr: "100::1", reason: "discard-only"},
		{addr: "100:0:0:1::1", reason: "dummy prefix"},
		{addr: "2001:2::1", reason: "IETF protocol assignment"},
		{addr: "2001:20::1", reason: "IETF protocol assignment"},
		{addr: "3fff::1", reason: "documentation"},
		{addr: "5f00::1", reason: "segment routing"},
		{addr: "192.88.99.1", reason: "6to4 relay anycast"},
		{addr: "198.51.100.1", reason: "documentation"},
		{addr: "203.0.113.1", reason: "documentation"},
		{addr: "2001::1", reason: "IETF protocol assignment"},
		{addr: "2001:db8::1", reason: "documentation"},
		{addr: "2002:7f00:1::1", reason: "6to4"},
		{addr: "fc00::1", reason: "unique local (private)"},
		{addr: "fd00:ec2::254", reason: "unique local (private)"},
		{addr: "fe80::1", reason: "link-local"},
		{addr: "fe80::1%eth0", reason: "link-local"},
		{addr: "fec0::1", reason: "site-local (deprecated)"},
		{addr: "ff02::1", reason: "multicast"},
		{addr: "127.0.0.1", allow: allow},
		{addr: "::ffff:127.0.0.1", allow: allow},
		{addr: "127.0.0.2", allow: allow, reason: "loopback"},
		{addr: "10.20.3.4", allow: allow},
		{addr: "10.21.3.4", allow: allow, reason: "private"},
		{addr: "::1", allow: allow, reason: "loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			got := guard{allow: tt.allow}.check(netip.MustParseAddr(tt.addr))
			if got != tt.reason {
				t.Errorf("check(%s) = %q, want %q", tt.addr, got, tt.reason)
			}
		})
	}
}

func TestGuardControl(t *testing.T) {
	t.Parallel()
	g := guard{allow: []netip.Prefix{netip.MustParsePrefix("192.168.5.0/24")}}
	tests := []struct {
		address string
		blocked bool
	}{
		{"93.184.215.14:443", false},
		{"[2606:4700::1]:80", false},
		{"192.168.5.9:8080", false},
		{"192.168.6.9:8080", true},
		{"127.0.0.1:80", true},
		{"[::1]:80", true},
		{"[fe80::1%eth0]:80", true},
		{"[::ffff:169.254.169.254]:80", true},
		{"not-an-address", true},
	}
	for _, tt := range tests {
		err := g.control("tcp", tt.address, nil)
		var b *BlockedError
		if got := errors.As(err, &b); got != tt.blocked {
			t.Errorf("control(%s) = %v, want blocked %v", tt.address, err, tt.blocked)
			continue
		}
		if b != nil && b.Address != tt.address {
			t.Errorf("control(%s): error names %q", tt.address, b.Address)
		}
	}
}
