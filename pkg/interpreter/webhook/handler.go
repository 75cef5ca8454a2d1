package webhook

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// MaxRequestBytes bounds the review a Handler reads.
const MaxRequestBytes = 4 << 20

// Handler serves the review protocol with answer: it decodes the review, checks the envelope, asks answer and
// writes its response back with the request's uid. A request that is not a review gets HTTP 400; answer's
// failures are Responses with Successful false.
func Handler(answer func(Request) Response) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST an InterpreterReview", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
		if err != nil {
			http.Error(w, fmt.Sprintf("reading the review: %v", err), http.StatusBadRequest)
			return
		}
		if len(body) > MaxRequestBytes {
			http.Error(w, fmt.Sprintf("review larger than %d bytes", MaxRequestBytes), http.StatusRequestEntityTooLarge)
			return
		}
		req, err := DecodeRequest(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp := answer(*req)
		resp.UID = req.UID
		out, err := json.Marshal(Review{APIVersion: APIVersion, Kind: Kind, Response: &resp})
		if err != nil {
			http.Error(w, fmt.Sprintf("encoding the response: %v", err), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

// DecodeRequest reads a review that carries a request.
func DecodeRequest(body []byte) (*Request, error) {
	var review Review
	if err := json.Unmarshal(body, &review); err != nil {
		return nil, fmt.Errorf("not an %s: %w", Kind, err)
	}
	if review.APIVersion != APIVersion || review.Kind != Kind {
		return nil, fmt.Errorf("apiVersion %q kind %q, want %s %s", review.APIVersion, review.Kind, APIVersion, Kind)
	}
	if review.Request == nil {
		return nil, fmt.Errorf("the review has no request")
	}
	if review.Request.UID == "" {
		return nil, fmt.Errorf("the request has no uid")
	}
	return review.Request, nil
}

// Fail is the answer of a webhook that cannot answer.
func Fail(format string, args ...any) Response {
	return Response{Successful: false, Message: fmt.Sprintf(format, args...)}
}
