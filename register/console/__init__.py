"""Read queries for the console pages and the review queue's decisions."""
