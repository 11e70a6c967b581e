package accounts

import (
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestUnknownUserCostsAsMuch: the dummy hash an unknown user is checked
// against has the cost of the costliest real hash, so the bcrypt work is
// the same as for a wrong password.
func TestUnknownUserCostsAsMuch(t *testing.T) {
	h5, _ := bcrypt.GenerateFromPassword([]byte("a"), 5)
	h6, _ := bcrypt.GenerateFromPassword([]byte("b"), 6)
	s, err := NewStaticUsers(User{Name: "a", PasswordHash: h5}, User{Name: "b", PasswordHash: h6})
	if err != nil {
		t.Fatal(err)
	}
	if cost, err := bcrypt.Cost(s.dummy); err != nil || cost != 6 {
		t.Errorf("dummy hash cost %d (%v), want 6", cost, err)
	}
}

// TestDummyHashCost: an unknown name is compared against a hash of the cost
// most users have, so that it answers in the time most real users do. With
// the costliest user's cost, as before, one user of a higher cost made
// every other user's name answer faster than an unknown one.
func TestDummyHashCost(t *testing.T) {
	tests := []struct {
		name  string
		costs []int // of the users
		want  int
	}{
		{"one user", []int{5}, 5},
		{"most users cheaper than one", []int{4, 4, 5}, 4},
		{"most users costlier", []int{4, 5, 5}, 5},
		{"a tie takes the higher", []int{4, 5}, 5},
	}
	hashes := map[int][]byte{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var users []User
			for i, c := range tt.costs {
				if hashes[c] == nil {
					h, err := bcrypt.GenerateFromPassword([]byte("pw"), c)
					if err != nil {
						t.Fatal(err)
					}
					hashes[c] = h
				}
				users = append(users, User{Name: string(rune('a' + i)), PasswordHash: hashes[c]})
			}
			s, err := NewStaticUsers(users...)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := bcrypt.Cost(s.dummy); err != nil || got != tt.want {
				t.Errorf("the dummy hash has cost %d (%v), want %d", got, err, tt.want)
			}
		})
	}
}
